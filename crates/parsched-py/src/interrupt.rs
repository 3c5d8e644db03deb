//! Runs off the main thread, stopped by Ctrl-C or `cancel_runs`.

use super::*;

/// `cancel_runs()` calls so far: a run that sees it change stops as on
/// Ctrl-C (runs on threads other than the main one never see the signal).
pub(crate) static CANCEL_CALLS: AtomicU64 = AtomicU64::new(0);

/// Stops every simulation in progress (pools, barrier, batch, cosched, fcs,
/// regions), in any thread: each ends within ~50 ms with `KeyboardInterrupt`
/// (for thread pools: Ctrl-C reaches only the main thread).
#[pyfunction]
pub(crate) fn cancel_runs() {
    CANCEL_CALLS.fetch_add(1, Ordering::SeqCst);
}

/// The same as `cancel_runs()` (its first name, when only cosched runs
/// watched it).
#[pyfunction]
pub(crate) fn cancel_cosched() {
    cancel_runs();
}

/// Runs `f` on a thread of its own with the GIL released, checking for
/// Python signals every 50 ms meanwhile: on one (Ctrl-C: the
/// `KeyboardInterrupt` its handler raises) sets `cancel`, waits for `f` to
/// return (it watches `cancel`) and raises the signal's exception; likewise
/// after a `cancel_cosched()` call (as `KeyboardInterrupt`).
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    cancel: &AtomicBool,
    f: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let generation = CANCEL_CALLS.load(Ordering::SeqCst);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        // Named, so that one can see from outside that a run is under way
        // (/proc/PID/task/*/comm; the tests use it).
        std::thread::Builder::new()
            .name("parsched-run".into())
            .spawn_scoped(scope, move || {
                // The receiver outlives this thread (it waits for the value).
                let _ = tx.send(f());
            })
            .map_err(|e| SimulationError::new_err(format!("cannot start a thread: {e}")))?;
        let mut rx = rx;
        loop {
            // (the receiver moves in and out: it is Send but not Sync)
            let (got, back) = py.allow_threads(move || {
                let got = rx.recv_timeout(Duration::from_millis(50));
                (got, rx)
            });
            rx = back;
            match got {
                Ok(v) => return Ok(v),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let signalled = py.check_signals().err().or_else(|| {
                        (CANCEL_CALLS.load(Ordering::SeqCst) != generation)
                            .then(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("cancelled"))
                    });
                    if let Some(e) = signalled {
                        cancel.store(true, Ordering::Relaxed);
                        let _ = py.allow_threads(move || rx.recv());
                        return Err(e);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(SimulationError::new_err("the simulation thread panicked"))
                }
            }
        }
    })
}
