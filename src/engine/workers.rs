//! quickrealm's own worker threads for `run()`: explicit stack size, a resizable worker count,
//! and panic isolation around every job.

use super::limits::{MAX_STACK_BYTES, STACK_HEADROOM};
use super::locks::lock_unpoisoned;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

pub type Job = Box<dyn FnOnce() + Send + 'static>;

enum Message {
    Run(Job),
    Exit,
}

pub struct WorkerPool {
    sender: Mutex<Sender<Message>>,
    receiver: Arc<Mutex<Receiver<Message>>>,
    workers: Mutex<usize>,
}

/// Stack for each worker: the largest guest stack a run may ask for, plus room for the engine.
pub(crate) const WORKER_STACK_BYTES: usize = MAX_STACK_BYTES + STACK_HEADROOM;
pub const MAX_WORKERS: usize = 256;

impl WorkerPool {
    pub(crate) fn new(workers: usize) -> std::io::Result<WorkerPool> {
        let (tx, rx) = channel();
        let pool = WorkerPool {
            sender: Mutex::new(tx),
            receiver: Arc::new(Mutex::new(rx)),
            workers: Mutex::new(0),
        };
        pool.resize(workers)?;
        Ok(pool)
    }

    pub fn workers(&self) -> usize {
        *lock_unpoisoned(&self.workers)
    }

    /// Grows or shrinks the pool; shrinking lets the surplus workers finish their current job.
    pub fn resize(&self, target: usize) -> std::io::Result<()> {
        let target = target.clamp(1, MAX_WORKERS);
        let mut current = lock_unpoisoned(&self.workers);
        while *current < target {
            let rx = self.receiver.clone();
            std::thread::Builder::new()
                .name(format!("quickrealm-{}", *current))
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker_loop(rx))?;
            *current += 1;
        }
        while *current > target {
            self.send(Message::Exit);
            *current -= 1;
        }
        Ok(())
    }

    fn send(&self, m: Message) -> bool {
        lock_unpoisoned(&self.sender).send(m).is_ok()
    }

    /// Queues a job; false if the pool is gone (the job is dropped).
    pub fn submit(&self, job: Job) -> bool {
        self.send(Message::Run(job))
    }
}

thread_local! {
    static ON_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on quickrealm's own worker threads, where blocking work costs no caller any latency.
pub(crate) fn on_worker_thread() -> bool {
    ON_WORKER.with(|w| w.get())
}

fn worker_loop(rx: Arc<Mutex<Receiver<Message>>>) {
    ON_WORKER.with(|w| w.set(true));
    loop {
        let message = lock_unpoisoned(&rx).recv();
        match message {
            Ok(Message::Run(job)) => {
                // A job reports its own failures; a panic here must never take the process down.
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
            Ok(Message::Exit) | Err(_) => return,
        }
    }
}

fn default_workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

static GLOBAL: OnceLock<Option<WorkerPool>> = OnceLock::new();

/// The process-wide pool, created on first use with one worker per core.
pub fn global() -> Option<&'static WorkerPool> {
    GLOBAL
        .get_or_init(|| WorkerPool::new(default_workers()).ok())
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn jobs_run_in_parallel_up_to_the_worker_count() {
        let pool = WorkerPool::new(2).unwrap();
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..6 {
            let (running, peak, done) = (running.clone(), peak.clone(), done_tx.clone());
            pool.submit(Box::new(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(40));
                running.fetch_sub(1, Ordering::SeqCst);
                done.send(()).unwrap();
            }));
        }
        for _ in 0..6 {
            done_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panicking_job_does_not_kill_its_worker() {
        let pool = WorkerPool::new(1).unwrap();
        pool.submit(Box::new(|| panic!("boom")));
        let (tx, rx) = mpsc::channel();
        pool.submit(Box::new(move || tx.send(7).unwrap()));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 7);
    }

    #[test]
    fn resize_changes_the_worker_count() {
        let pool = WorkerPool::new(1).unwrap();
        pool.resize(3).unwrap();
        assert_eq!(pool.workers(), 3);
        pool.resize(1).unwrap();
        assert_eq!(pool.workers(), 1);
        pool.resize(0).unwrap();
        assert_eq!(pool.workers(), 1, "at least one worker stays");
    }
}
