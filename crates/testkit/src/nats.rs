//! A real `nats-server` with JetStream on a free loopback port, for the tests of the
//! frontier cluster (the nodes hand each other items through JetStream): started on a store
//! directory the test owns, killed (`kill -9`, as a crash) and started again on it, stopped
//! when dropped.
//!
//! The server is Debian's `nats-server` package (`.ci/run` installs it). Without it
//! [`NatsServer::start`] returns `None` after printing why, so the test skips — unless
//! `CI=true`, where a missing server is a failure.
//!
//! Tests of several processes run at once on one machine (and several in one process): a
//! free port picked by one may be taken by another's server before this one binds it. So a
//! server is named uniquely and counted as started only once the server answering on its
//! port says that name; otherwise two tests could share one JetStream and take each other's
//! items.

use std::io::{BufRead, Read};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a started server may take to accept connections.
const START_LIMIT: Duration = Duration::from_secs(20);

/// A running `nats-server -js` on `127.0.0.1:port`.
pub struct NatsServer {
    child: Option<Child>,
    /// This server's name (`-n`), unique on the machine, which its `INFO` line says.
    name: String,
    port: u16,
    store: PathBuf,
    log: PathBuf,
}

/// The `nats-server` binary: `$NATS_SERVER`, else the first on the path or Debian's.
fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
}

/// A free loopback port (bound and let go: another process may take it meanwhile, which
/// the start then reports).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

impl NatsServer {
    /// Starts a server with JetStream storing in `store` (created), or returns `None` after
    /// printing why the test skips when `nats-server` is not installed (a panic when
    /// `CI=true`). Panics if it does not accept connections within 20 s.
    pub fn start(store: &Path) -> Option<Self> {
        let Some(bin) = binary() else {
            let msg = "nats-server is needed for the frontier cluster tests \
                       (apt-get install nats-server)";
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{msg}; CI=true, so this is a failure"
            );
            eprintln!("SKIPPED: {msg}");
            return None;
        };
        std::fs::create_dir_all(store).expect("cannot create the NATS store directory");
        static STARTED: AtomicU64 = AtomicU64::new(0);
        let mut server = Self {
            child: None,
            name: format!(
                "crawlrank-test-{}-{}",
                std::process::id(),
                STARTED.fetch_add(1, Ordering::Relaxed)
            ),
            port: free_port(),
            store: store.to_path_buf(),
            log: store.with_extension("log"),
        };
        // The free port may be taken by another test before the server binds it (then the
        // server exits): try a few ports.
        for attempt in 1.. {
            match server.spawn(&bin) {
                Ok(()) => break,
                Err(why) if attempt < 5 => {
                    eprintln!(
                        "nats-server on port {} did not start ({why}); another port",
                        server.port
                    );
                    server.kill();
                    server.port = free_port();
                }
                Err(why) => panic!("{why}"),
            }
        }
        Some(server)
    }

    /// Starts the server on `self.port` and waits until it answers as a NATS server does: the
    /// first bytes of a connection are its `INFO` line (a connection accepted by whatever
    /// else took the port is not enough).
    fn spawn(&mut self, bin: &Path) -> Result<(), String> {
        let log = std::fs::File::create(&self.log).expect("cannot create the NATS log");
        let child = Command::new(bin)
            .args(["-js", "-a", "127.0.0.1", "-n", &self.name, "-p"])
            .arg(self.port.to_string())
            .arg("-sd")
            .arg(&self.store)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        self.child = Some(child);
        let until = Instant::now() + START_LIMIT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                return Err(format!(
                    "nats-server exited at start ({status}): {}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                ));
            }
            if self.answers_info() {
                return Ok(());
            }
            if Instant::now() >= until {
                return Err("nats-server did not answer within 20 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether a connection to the port gets, within a second, the `INFO` line of this
    /// server (its name), not another's that took the port first.
    fn answers_info(&self) -> bool {
        let Ok(conn) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
        let mut line = String::new();
        let read = std::io::BufReader::new(conn.take(64 * 1024)).read_line(&mut line);
        read.is_ok()
            && line.starts_with("INFO")
            && line.contains(&format!("\"server_name\":\"{}\"", self.name))
    }

    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills it at once (SIGKILL: a crash, nothing flushed beyond what it had written).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and store directory.
    pub fn restart(&mut self) {
        self.kill();
        let bin = binary().expect("nats-server vanished");
        if let Err(why) = self.spawn(&bin) {
            panic!("{why}");
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}
