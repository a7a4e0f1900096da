//! One offline evaluation (docs/frontier-rank.md): the known graph of a downloaded set, the split
//! of its frontier, every method's scores, `ω` tuned on the training part when asked, and the
//! measures on the test part.

use crate::known::KnownGraph;
use crate::learned::{features, fit_predict, Model};
use crate::measures::{curve, frontier_ratios, FrontierRatios, Point};
use crate::methods::{rank_order, scores, tune_omega, Method, OMEGAS};
use crate::split::split;
use anyhow::{ensure, Result};
use crawlrank_graph::access::Successors;
use crawlrank_rank::RwConfig;
use std::time::Instant;

/// Mixed into the seed of the split, so that it does not replay the stream that drew the random
/// seeds of the same `--rng-seed`.
const SPLIT_KEY: u64 = 0x7370_6c69_745f_6631;

/// How RW-EG's `ω` is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OmegaChoice {
    /// This value, in `[0, 1]`.
    Fixed(f64),
    /// Tuned on the training part over `{0, 0.1, …, 1}` ([`tune_omega`](crate::tune_omega)).
    Tune,
}

/// What to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The methods, in report order.
    pub methods: Vec<Method>,
    /// RW-EG's `ω` (default: fixed 0.8, the §6 fallback).
    pub omega: OmegaChoice,
    /// `α`, `γ`, `ε` and the stopping rule of the walks (`omega` is set per method).
    pub rw: RwConfig,
    /// Seed of the split and of `random`.
    pub rng_seed: u64,
    /// Share of the frontier in the training part (0.65).
    pub train_fraction: f64,
    /// Bootstrap resamples of the training part when tuning `ω` (20; 0: none).
    pub bootstrap: usize,
    /// The model of `learned` (the random forest).
    pub model: Model,
    /// `learned` fits on at most this many training pages, a seeded uniform sample when the
    /// training part is larger ([`DEFAULT_MAX_TRAIN`]).
    pub max_train: usize,
}

/// `learned`'s default cap on training pages: smartcore fits on one thread, and a forest on the
/// 2.6 million training pages of a 10^7-page web's frontier had not finished after five minutes; on
/// 200,000 it takes about three minutes (docs/frontier-rank.md).
pub const DEFAULT_MAX_TRAIN: usize = 200_000;

impl Default for Config {
    fn default() -> Self {
        Self {
            methods: Method::ALL.to_vec(),
            omega: OmegaChoice::Fixed(0.8),
            rw: RwConfig::default(),
            rng_seed: 42,
            train_fraction: 0.65,
            bootstrap: 20,
            model: Model::Forest,
            max_train: DEFAULT_MAX_TRAIN,
        }
    }
}

/// What [`evaluate`] reports as it goes: a message, and how many of its long steps (the walks
/// of the tuning and the methods' scores) are done out of how many.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Long steps finished.
    pub done: usize,
    /// Long steps in all.
    pub total: usize,
    /// What happened or is starting.
    pub message: String,
}

/// One method's scores and measures.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodResult {
    /// The method.
    pub method: Method,
    /// Its score for each frontier page (in [`Evaluation::frontier`] order).
    pub scores: Vec<f64>,
    /// Solver iterations (0 for `random` and `indegree`).
    pub iterations: usize,
    /// Time to compute the scores.
    pub seconds: f64,
    /// Impact relative to the ideal (and mean-PageRank ratio) on the test part, per `x`.
    pub curve: Vec<Point>,
}

impl MethodResult {
    /// The impact relative to the ideal at `permille` (NaN if not measured).
    pub fn impact_at(&self, permille: u32) -> f64 {
        self.curve
            .iter()
            .find(|p| p.permille == permille)
            .map_or(f64::NAN, |p| p.impact)
    }
}

/// The result of [`evaluate`].
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// The configuration evaluated.
    pub config: Config,
    /// `|D|`.
    pub downloaded: usize,
    /// Pages of `D` with a positive impact.
    pub downloaded_with_impact: usize,
    /// Arcs of the known graph.
    pub known_arcs: u64,
    /// Original ids of the frontier pages, increasing.
    pub frontier: Vec<u32>,
    /// Whether each frontier page is in the test part.
    pub is_test: Vec<bool>,
    /// True impact of each frontier page.
    pub truth: Vec<f64>,
    /// RW-EG's `ω` (given or tuned).
    pub omega: f64,
    /// With tuning, the criterion per `ω` on the training part.
    pub tuning: Option<Vec<(f64, f64)>>,
    /// One result per method.
    pub methods: Vec<MethodResult>,
    /// The frontier impact ratios.
    pub ratios: FrontierRatios,
    /// Whether the curves carry the mean-PageRank ratio.
    pub has_pagerank: bool,
}

impl Evaluation {
    /// Pages of the test part.
    pub fn test_len(&self) -> usize {
        self.is_test.iter().filter(|&&t| t).count()
    }

    /// Pages of the test part with a positive true impact.
    pub fn test_with_impact(&self) -> usize {
        self.is_test
            .iter()
            .zip(&self.truth)
            .filter(|(&t, &i)| t && i > 0.0)
            .count()
    }
}

/// Evaluates the frontier rankings of the crawl that downloaded `downloaded` in `full` (see the
/// [module documentation](self)). `impact` has one value per page of `full`: downloaded pages'
/// values are the observed impact the walks use, frontier pages' the truth the evaluation uses.
/// `full_pagerank` (the whole graph's PageRank) adds the mean-PageRank ratio. `progress` hears
/// each [`Step`].
pub fn evaluate<G: Successors>(
    full: &G,
    downloaded: &[u32],
    impact: &[f64],
    full_pagerank: Option<&[f64]>,
    config: &Config,
    progress: &mut dyn FnMut(Step),
) -> Result<Evaluation> {
    evaluate_with(
        full,
        downloaded,
        impact,
        &[],
        full_pagerank,
        config,
        progress,
    )
}

/// Checks that `impact` has one value for each of the `n` pages, each finite and non-negative.
fn check_impacts(impact: &[f64], n: usize) -> Result<()> {
    ensure!(
        impact.len() == n,
        "{} impacts for a graph of {n} pages",
        impact.len()
    );
    ensure!(
        impact.iter().all(|v| v.is_finite() && *v >= 0.0),
        "impacts must be finite and non-negative"
    );
    Ok(())
}

/// [`evaluate`] with other impact types (the other columns of the impact table, one value per
/// page of `full`): `learned` gets RW, RW-EG and RW-virtual features from each of them too, over
/// the downloaded pages' values only (frontier pages' values are never read).
pub fn evaluate_with<G: Successors>(
    full: &G,
    downloaded: &[u32],
    impact: &[f64],
    other_impacts: &[&[f64]],
    full_pagerank: Option<&[f64]>,
    config: &Config,
    progress: &mut dyn FnMut(Step),
) -> Result<Evaluation> {
    let n = full.node_count();
    for values in other_impacts.iter().chain([&impact]) {
        check_impacts(values, n)?;
    }
    if let Some(pr) = full_pagerank {
        ensure!(pr.len() == n, "{} PageRank values for {n} pages", pr.len());
    }
    if let OmegaChoice::Fixed(w) = config.omega {
        ensure!((0.0..=1.0).contains(&w), "omega must be in [0, 1], not {w}");
    }
    ensure!(
        config.train_fraction > 0.0 && config.train_fraction < 1.0,
        "the training share must be in (0, 1), not {}",
        config.train_fraction
    );
    ensure!(!config.methods.is_empty(), "no method to evaluate");
    let known = KnownGraph::new(full, downloaded)?;
    let d = known.downloaded;
    let all = known.restrict(impact);
    let mut observed = all.clone();
    observed[d..].iter_mut().for_each(|v| *v = 0.0);
    let mut truth_v = all;
    truth_v[..d].iter_mut().for_each(|v| *v = 0.0);
    let with_impact = observed[..d].iter().filter(|&&v| v > 0.0).count();
    ensure!(
        with_impact > 0,
        "no downloaded page has a positive impact ({d} downloaded pages): the impact file has \
         nothing to propagate"
    );
    let total = config.methods.len()
        + if config.omega == OmegaChoice::Tune {
            OMEGAS.len()
        } else {
            0
        };
    let mut done = 0;
    let mut report = |done: usize, message: String| {
        progress(Step {
            done,
            total,
            message,
        })
    };
    report(
        0,
        format!(
            "D: {d} pages ({with_impact} with impact); F: {} pages; known graph: {} arcs",
            known.frontier_len(),
            known.graph.num_arcs()
        ),
    );
    let is_test = split(
        known.frontier_len(),
        config.train_fraction,
        config.rng_seed ^ SPLIT_KEY,
    );
    let (mut train, mut test) = (Vec::new(), Vec::new());
    for (i, &t) in is_test.iter().enumerate() {
        if t { &mut test } else { &mut train }.push(d + i);
    }
    ensure!(!test.is_empty(), "the test part of the frontier is empty");
    let pagerank_v = full_pagerank.map(|pr| known.restrict(pr));
    let ideal = rank_order(&test, &truth_v);

    let (omega, tuning) = match config.omega {
        OmegaChoice::Fixed(w) => (w, None),
        OmegaChoice::Tune => {
            let started = Instant::now();
            let (best, curve) =
                tune_omega(&train, &truth_v, config.bootstrap, config.rng_seed, |w| {
                    report(done, format!("tuning: RW-EG with omega = {w:.1}"));
                    done += 1;
                    Ok(scores(
                        Method::RwEg,
                        &known,
                        &observed,
                        &config.rw,
                        w,
                        config.rng_seed,
                    )?
                    .0)
                })?;
            report(
                done,
                format!("tuned omega = {best:.1} in {:.2?}", started.elapsed()),
            );
            (best, Some(curve))
        }
    };

    let mut methods = Vec::with_capacity(config.methods.len());
    for &method in &config.methods {
        let started = Instant::now();
        let mut fit_note = String::new();
        let (s, iterations) = if method == Method::Learned {
            // Other impact types: downloaded pages' values only.
            let others: Vec<Vec<f64>> = other_impacts
                .iter()
                .map(|o| {
                    let mut v = known.restrict(o);
                    v[d..].iter_mut().for_each(|x| *x = 0.0);
                    v
                })
                .collect();
            let mut sets: Vec<&[f64]> = vec![&observed];
            sets.extend(others.iter().map(Vec::as_slice));
            let (rows, iterations) = features(&known, &sets, &config.rw, omega)?;
            let frontier: Vec<usize> = (d..known.len()).collect();
            let fit_started = Instant::now();
            let sampled: Vec<usize> =
                crawlrank_learn::sample_rows(train.len(), config.max_train, config.rng_seed, 0)
                    .into_iter()
                    .map(|i| train[i])
                    .collect();
            let predicted = fit_predict(
                config.model,
                &rows,
                &truth_v,
                &sampled,
                &frontier,
                config.rng_seed,
            )?;
            fit_note = format!(
                " ({}: {} features, {} training pages{}, fit and prediction {:.2} s)",
                config.model.name(),
                rows.width(),
                sampled.len(),
                if sampled.len() < train.len() {
                    format!(" sampled of {}", train.len())
                } else {
                    String::new()
                },
                fit_started.elapsed().as_secs_f64()
            );
            let mut s = vec![0.0; d];
            s.extend(predicted);
            (s, iterations)
        } else {
            scores(
                method,
                &known,
                &observed,
                &config.rw,
                omega,
                config.rng_seed,
            )?
        };
        let seconds = started.elapsed().as_secs_f64();
        done += 1;
        report(
            done,
            format!(
                "{}: {iterations} iterations, {seconds:.2} s{fit_note}",
                method.name()
            ),
        );
        let order = rank_order(&test, &s);
        let curve = curve(&order, &ideal, &truth_v, pagerank_v.as_deref());
        methods.push(MethodResult {
            method,
            scores: s[d..].to_vec(),
            iterations,
            seconds,
            curve,
        });
    }
    let ratios = frontier_ratios(&known, &observed, &truth_v);
    Ok(Evaluation {
        config: config.clone(),
        downloaded: d,
        downloaded_with_impact: with_impact,
        known_arcs: known.graph.num_arcs(),
        frontier: known.frontier().to_vec(),
        is_test,
        truth: truth_v[d..].to_vec(),
        omega,
        tuning,
        methods,
        ratios,
        has_pagerank: full_pagerank.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawlrank_graph::Csr;

    /// 0 → 1..=20 (0 has impact), 21 → 22..=41 (no impact), 0 → 21.
    fn star() -> (Csr, Vec<f64>) {
        let mut arcs: Vec<(u32, u32)> = (1..=20).map(|j| (0, j)).collect();
        arcs.extend((22..=41).map(|j| (21, j)));
        arcs.push((0, 21));
        let mut impact = vec![0.0; 42];
        impact[0] = 5.0;
        for (j, v) in impact.iter_mut().enumerate().take(21).skip(1) {
            *v = j as f64;
        }
        impact[22..=41].iter_mut().for_each(|v| *v = 0.5);
        (Csr::from_arcs(42, &arcs), impact)
    }

    #[test]
    fn evaluation_end_to_end_on_a_star() {
        let (g, impact) = star();
        let pr = crawlrank_rank::pagerank(&g, &Default::default())
            .unwrap()
            .scores;
        let config = Config {
            omega: OmegaChoice::Tune,
            ..Config::default()
        };
        let mut steps = Vec::new();
        let e = evaluate(&g, &[0, 21], &impact, Some(&pr), &config, &mut |s| {
            steps.push(s)
        })
        .unwrap();
        // One message for the sets, 11 tuning walks, one per method and the tuned ω.
        assert_eq!(steps.len(), 1 + 11 + 1 + 7);
        assert!(steps.iter().all(|s| s.total == 18));
        assert_eq!(steps.last().unwrap().done, 18);
        assert!(steps[0]
            .message
            .starts_with("D: 2 pages (1 with impact); F: 40 pages"));
        assert_eq!(e.downloaded, 2);
        assert_eq!(e.downloaded_with_impact, 1);
        assert_eq!(e.frontier.len(), 40);
        assert_eq!(e.test_len(), 14);
        assert_eq!(e.methods.len(), 7);
        assert!(e.has_pagerank && e.tuning.as_ref().unwrap().len() == 11);
        // RW puts 0's links (impact 1..20) before 21's (0.5), PageRank the other way round.
        let rw = e.methods.iter().find(|m| m.method == Method::Rw).unwrap();
        let prm = e
            .methods
            .iter()
            .find(|m| m.method == Method::PageRank)
            .unwrap();
        assert!(rw.scores[0] > rw.scores[39] && prm.scores[0] < prm.scores[39]);
        assert!(rw.impact_at(100) > 3.0 * prm.impact_at(100));
        // Scores are per frontier page; the same call gives the same result.
        assert_eq!(rw.scores.len(), 40);
        let again = evaluate(&g, &[0, 21], &impact, Some(&pr), &config, &mut |_| {}).unwrap();
        for (a, b) in again.methods.iter().zip(&e.methods) {
            assert_eq!((&a.scores, &a.curve), (&b.scores, &b.curve));
        }
        assert_eq!(again.is_test, e.is_test);
        assert_eq!(e.ratios.with_impact.ratio, 210.0);
        assert_eq!(e.ratios.without_impact.ratio, 10.0);
    }

    /// D = 0..40 (impact 1 each); frontier page 40 + k has (k mod 20) + 1 in-links from D and
    /// impact (in-degree)³: impact is a clear function of a feature.
    fn indegree_world() -> (Csr, Vec<u32>, Vec<f64>) {
        let mut arcs = Vec::new();
        let mut impact = vec![1.0; 440];
        for k in 0..400u32 {
            let deg = k % 20 + 1;
            for i in 0..deg {
                arcs.push(((k + i * 7) % 40, 40 + k));
            }
            impact[40 + k as usize] = f64::from(deg).powi(3);
        }
        (Csr::from_arcs(440, &arcs), (0..40).collect(), impact)
    }

    /// The default configuration with `learned` as its only method.
    fn learned_only() -> Config {
        Config {
            methods: vec![Method::Learned],
            ..Config::default()
        }
    }

    fn learned(e: &Evaluation) -> &MethodResult {
        e.methods
            .iter()
            .find(|m| m.method == Method::Learned)
            .unwrap()
    }

    #[test]
    fn learned_beats_random_where_impact_follows_a_feature() {
        let (g, d, impact) = indegree_world();
        for model in Model::ALL {
            let config = Config {
                methods: vec![Method::Random, Method::Learned],
                model,
                ..Config::default()
            };
            let e = evaluate(&g, &d, &impact, None, &config, &mut |_| {}).unwrap();
            let (l, r) = (learned(&e), &e.methods[0]);
            for permille in [20, 100] {
                // (The tree's leaves hold ≥ 20 pages, so it merges the top in-degrees.)
                assert!(l.impact_at(permille) > 0.85, "{model:?} {:?}", l.curve);
                assert!(r.impact_at(permille) < 0.6, "{:?}", r.curve);
            }
            // Determinism per seed: the same run gives the same scores; another seed (another
            // split and model seed) other scores.
            let again = evaluate(&g, &d, &impact, None, &config, &mut |_| {}).unwrap();
            assert_eq!(learned(&again).scores, l.scores);
            let other = Config {
                rng_seed: 7,
                ..config.clone()
            };
            let other = evaluate(&g, &d, &impact, None, &other, &mut |_| {}).unwrap();
            assert_ne!(learned(&other).scores, l.scores);
        }
    }

    #[test]
    fn learned_on_a_capped_sample_of_the_training_part_still_learns() {
        let (g, d, impact) = indegree_world();
        let config = learned_only();
        let full = evaluate(&g, &d, &impact, None, &config, &mut |_| {}).unwrap();
        let train = full.frontier.len() - full.test_len();
        let capped = Config {
            max_train: train / 2,
            ..config
        };
        let half = evaluate(&g, &d, &impact, None, &capped, &mut |_| {}).unwrap();
        assert_ne!(learned(&half).scores, learned(&full).scores);
        assert!(
            learned(&half).impact_at(100) > 0.8,
            "{:?}",
            learned(&half).curve
        );
    }

    #[test]
    fn learned_never_sees_test_impacts_nor_frontier_values_of_other_columns() {
        let (g, d, impact) = indegree_world();
        let config = learned_only();
        let e = evaluate(&g, &d, &impact, None, &config, &mut |_| {}).unwrap();
        // Absurd impacts on every test page: the same predictions (only the measures move).
        let mut absurd = impact.clone();
        for (i, &t) in e.is_test.iter().enumerate() {
            if t {
                absurd[40 + i] = if i % 2 == 0 { 1e12 } else { 0.0 };
            }
        }
        let a = evaluate(&g, &d, &absurd, None, &config, &mut |_| {}).unwrap();
        assert_eq!(a.is_test, e.is_test);
        assert_eq!(learned(&a).scores, learned(&e).scores);
        assert_ne!(learned(&a).curve, learned(&e).curve);
        // A second impact type adds features from D's values; its frontier values are never
        // read.
        let mut second: Vec<f64> = (0..440).map(|i| (i % 3) as f64).collect();
        let with = evaluate_with(&g, &d, &impact, &[&second], None, &config, &mut |_| {}).unwrap();
        second[40..].iter_mut().for_each(|v| *v = 1e9);
        let again = evaluate_with(&g, &d, &impact, &[&second], None, &config, &mut |_| {}).unwrap();
        assert_eq!(learned(&with).scores, learned(&again).scores);
        second[0] = -1.0;
        assert!(evaluate_with(&g, &d, &impact, &[&second], None, &config, &mut |_| {}).is_err());
    }

    #[test]
    fn bad_inputs() {
        let (g, impact) = star();
        let run = |d: &[u32], impact: &[f64], config: &Config| {
            evaluate(&g, d, impact, None, config, &mut |_| {})
                .unwrap_err()
                .to_string()
        };
        let c = Config::default();
        assert!(run(&[], &impact, &c).contains("D is empty"));
        assert!(run(&[22], &impact, &c).contains("frontier F is empty"));
        assert!(run(&[21], &impact, &c).contains("no downloaded page has a positive impact"));
        let mut neg = impact.clone();
        neg[3] = -1.0;
        assert!(run(&[0], &neg, &c).contains("non-negative"));
        neg[3] = f64::NAN;
        assert!(run(&[0], &neg, &c).contains("finite"));
        let bad = Config {
            omega: OmegaChoice::Fixed(1.5),
            ..Config::default()
        };
        assert!(run(&[0], &impact, &bad).contains("omega must be in [0, 1]"));
    }
}
