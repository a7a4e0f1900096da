//! A `crawlrank frontier serve` process for the tests that need the service as a process
//! (SIGKILL and restart, workers as processes).

use crawlrank_urlfrontier::proto::url_frontier_client::UrlFrontierClient;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tonic::transport::Channel;

pub type Client = UrlFrontierClient<Channel>;

/// A `crawlrank frontier serve` process, SIGKILLed when dropped (so a failing test leaves
/// no server behind).
pub struct Serve {
    pub child: Child,
    pub addr: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// Starts the service on `state`, on a free loopback port (port 0: the kernel picks one),
    /// and waits (at most 60 s) for the line that says where it listens.
    pub fn start(state: &Path, extra: &[&str]) -> Serve {
        Self::start_at(state, "127.0.0.1:0", extra)
    }

    /// Starts the service on `state` at `addr` (a cluster node's fixed address, or a restart at the address of a killed one), and waits
    /// (at most 60 s) for the line that says where it listens.
    pub fn start_at(state: &Path, addr: &str, extra: &[&str]) -> Serve {
        Self::start_at_with_env(state, addr, extra, &[])
    }

    /// [`Serve::start_at`] with variables `env` added to the environment (a crash point:
    /// `CRAWLRANK_FAILPOINT`). A process that reaches its crash point before it listens (a
    /// node publishing its outbox as it starts) is returned as it ends, for
    /// [`Serve::wait_exit`].
    pub fn start_at_with_env(
        state: &Path,
        addr: &str,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_crawlrank"))
            .args(["frontier", "serve", "--addr", addr, "--state"])
            .arg(state)
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start crawlrank");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Reads stderr to its end so the process never blocks on a full pipe.
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split(" API on ").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(Ok(addr));
                } else {
                    let _ = tx.send(Err(line));
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut said = Vec::new();
        let addr = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Ok(addr)) => break addr,
                Ok(Err(line)) if line.contains("CRAWLRANK_FAILPOINT=") => break addr.to_string(),
                Ok(Err(line)) => said.push(line),
                Err(_) => {
                    let _ = child.kill();
                    panic!("the service did not say where it listens within 60 s: {said:?}")
                }
            }
        };
        Serve { child, addr }
    }

    /// Waits (at most `within`) for the process to end by itself (a crash point); its exit
    /// status.
    pub fn wait_exit(mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("cannot wait for the service") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the service at {} did not end within {within:?}",
                self.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (`Child::kill` sends SIGKILL on Unix), and wait for the end.
    pub fn kill9(mut self) {
        self.child.kill().expect("cannot kill the service");
        self.child.wait().expect("cannot wait for the service");
    }

    pub async fn client(&self) -> Client {
        tokio::time::timeout(
            Duration::from_secs(10),
            UrlFrontierClient::connect(format!("http://{}", self.addr)),
        )
        .await
        .expect("connecting took more than 10 s")
        .expect("cannot connect to the service")
    }
}
