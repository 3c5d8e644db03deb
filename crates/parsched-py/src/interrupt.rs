//! Runs off the main thread, stopped by Ctrl-C or `cancel_runs`.

use super::*;

/// `cancel_runs()` calls so far: a run that sees it change stops as on
/// Ctrl-C (runs on threads other than the main one never see the signal).
pub(crate) static CANCEL_CALLS: AtomicU64 = AtomicU64::new(0);

/// Whether a run longer than [`PROGRESS_AFTER`] shows its events so far on
/// stderr (`show_progress`; the command line turns it on on a terminal).
static SHOW_PROGRESS: AtomicBool = AtomicBool::new(false);

/// A run shows progress once it has taken this long.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// Turns the progress line of long runs on stderr on or off (every model:
/// events simulated so far and seconds, refreshed every second, erased
/// when the run ends). Off by default; `parsched simulate` turns it on when
/// stderr is a terminal.
#[pyfunction]
pub(crate) fn show_progress(on: bool) {
    SHOW_PROGRESS.store(on, Ordering::Relaxed);
}

/// The progress line of a run `elapsed` into it, `events` done.
fn progress_line(events: u64, elapsed: Duration) -> String {
    format!(
        "\rparsched: {events:.3e} events simulated in {:.0} s (Ctrl-C stops the run)",
        elapsed.as_secs_f64()
    )
}

/// Stops every simulation in progress (any model), in any thread: each ends within ~50 ms with `KeyboardInterrupt`
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
    let progress = Arc::new(AtomicU64::new(0));
    let started = std::time::Instant::now();
    let mut shown = started;
    let mut showing = false;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        // Named, so that one can see from outside that a run is under way
        // (/proc/PID/task/*/comm; the tests use it).
        std::thread::Builder::new()
            .name("parsched-run".into())
            .spawn_scoped(scope, {
                let progress = progress.clone();
                move || {
                    // The receiver outlives this thread (it waits for the value).
                    let _ = tx.send(parsched_sim::cancel::with_progress(&progress, f));
                }
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
            if showing && !matches!(got, Err(std::sync::mpsc::RecvTimeoutError::Timeout)) {
                // Erase the progress line.
                eprint!("\r\x1b[K");
            }
            match got {
                Ok(v) => return Ok(v),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let now = std::time::Instant::now();
                    if SHOW_PROGRESS.load(Ordering::Relaxed)
                        && now - started >= PROGRESS_AFTER
                        && now - shown >= Duration::from_secs(1)
                    {
                        shown = now;
                        showing = true;
                        eprint!(
                            "{}",
                            progress_line(progress.load(Ordering::Relaxed), now - started)
                        );
                    }
                    let signalled = py.check_signals().err().or_else(|| {
                        (CANCEL_CALLS.load(Ordering::SeqCst) != generation)
                            .then(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("cancelled"))
                    });
                    if let Some(e) = signalled {
                        if showing {
                            eprint!("\r\x1b[K");
                        }
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
