//! Stop signals for a front end: Ctrl-C (SIGINT) and SIGTERM, received on a thread of the
//! caller's ([`StopSignals`]).
//!
//! Why so little: a crawl stops cleanly when the flag it was given is set
//! ([`crate::engine::crawl`]'s `stop`), and what a signal means — set that flag, tell the
//! user, quit at once on a second one — is the front end's business (the CLI's `crawl`
//! command). This module only receives the signals, with the tokio runtime the crate uses
//! anyway, so that a front end needs no signal crate of its own. It never prints and never
//! exits the process.

use anyhow::{Context, Result};

/// Listens for SIGINT and SIGTERM (on other systems, Ctrl-C) from its creation on: from then
/// on they no longer end the process, they wake [`wait`](Self::wait).
pub struct StopSignals {
    rt: tokio::runtime::Runtime,
    listeners: Listeners,
}

#[cfg(unix)]
struct Listeners {
    interrupt: tokio::signal::unix::Signal,
    /// `None` when SIGTERM cannot be listened for: then only SIGINT stops the crawl.
    terminate: Option<tokio::signal::unix::Signal>,
}

#[cfg(unix)]
impl Listeners {
    /// Registers the handlers (inside the runtime, whose driver delivers the signals).
    fn register(rt: &tokio::runtime::Runtime) -> Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        let _in_runtime = rt.enter();
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C")?,
            terminate: signal(SignalKind::terminate()).ok(),
        })
    }

    async fn next(&mut self) -> bool {
        let Self {
            interrupt,
            terminate,
        } = self;
        let terminate = async {
            match terminate.as_mut() {
                Some(t) => t.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            got = interrupt.recv() => got.is_some(),
            got = terminate => got.is_some(),
        }
    }
}

#[cfg(not(unix))]
struct Listeners;

#[cfg(not(unix))]
impl Listeners {
    fn register(_: &tokio::runtime::Runtime) -> Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) -> bool {
        tokio::signal::ctrl_c().await.is_ok()
    }
}

impl StopSignals {
    /// Starts listening.
    pub fn listen() -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the signal handler")?;
        let listeners = Listeners::register(&rt)?;
        Ok(Self { rt, listeners })
    }

    /// Blocks until the next signal: `true` when one came, `false` when none can come any
    /// more.
    pub fn wait(&mut self) -> bool {
        self.rt.block_on(self.listeners.next())
    }
}
