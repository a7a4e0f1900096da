//! crawlrank's extension service, `crawlrank.frontier.v1.CrawlrankFrontier`
//! (`proto/crawlrank_frontier.proto`), served next to the URLFrontier service on the same
//! port by the same [`FrontierService`]: `ReportPage` and `GetRanking`.
//!
//! Why an extension: URLFrontier has no call that reports a fetched page together with its
//! out-links (a client sends discovered items and a known item on a stream, and the policy
//! only learns the link structure if they arrive in the right order), and no way to read the
//! policy's ranking. Both are what a policy-ordered frontier is for, so they get their own
//! package, leaving the API's untouched for its clients.
//!
//! `ReportPage` is one logged call ([`Call::Report`]): applied under the service's lock and
//! committed before it is answered, like every changing call. `GetRanking` only reads.

use crate::ext_proto::{
    crawlrank_frontier_server::CrawlrankFrontier, PageReport, PageReportAck, RankedUrl,
    RankingParams,
};
use crate::proto::ack_message::Status as AckStatus;
use crate::service::{BoxStream, FrontierService};
use crate::state::{Answer, Call};
use crawlrank_urlfrontier::{DEFAULT_RANKING_LIMIT, MAX_RANKING_LIMIT};
use tonic::{Request, Response, Status};

#[tonic::async_trait]
impl CrawlrankFrontier for FrontierService {
    async fn report_page(
        &self,
        request: Request<PageReport>,
    ) -> Result<Response<PageReportAck>, Status> {
        let report = request.into_inner();
        let answer = match self.report_clustered(&report).await {
            Some(answer) => answer?,
            None => self.run_one(Call::Report(report)).await?,
        };
        match answer {
            Answer::Report(counts, AckStatus::Ok) => Ok(Response::new(PageReportAck {
                discovered: counts.discovered,
                known: counts.known,
                invalid: counts.invalid,
            })),
            Answer::Report(..) => Err(Status::resource_exhausted(
                "ReportPage: the crawl cannot hold more URLs; the out-links were applied, the \
                 page's update was not",
            )),
            other => Err(Status::internal(format!("unexpected answer {other:?}"))),
        }
    }

    type GetRankingStream = BoxStream<RankedUrl>;

    async fn get_ranking(
        &self,
        request: Request<RankingParams>,
    ) -> Result<Response<Self::GetRankingStream>, Status> {
        let p = request.into_inner();
        let limit = match p.limit {
            0 => DEFAULT_RANKING_LIMIT,
            l if l > MAX_RANKING_LIMIT => {
                return Err(Status::invalid_argument(format!(
                    "GetRanking: limit {l} is over the {MAX_RANKING_LIMIT} a call may return"
                )))
            }
            l => l,
        };
        let ranked = self
            .read(move |state, now| state.ranking(&p.crawl_id, limit as usize, now))
            .await??;
        let urls = ranked.into_iter().enumerate().map(|(i, r)| {
            Ok(RankedUrl {
                rank: i as u64 + 1,
                url: r.url,
                key: r.key,
                score: r.score,
                state: r.state.to_string(),
            })
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(urls))))
    }
}
