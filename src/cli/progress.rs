//! A progress bar on stderr, drawn from the engine's live counters by a separate thread so the
//! data path never waits for the terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iosurvey::engine::Progress;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Starts drawing; the returned function stops and clears the bar.
pub fn watch(progress: Arc<Progress>) -> Box<dyn FnOnce()> {
    let stop = Arc::new(AtomicBool::new(false));
    // Hidden until a phase says how much it moves: an empty length would draw a full bar.
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let thread = {
        let (stop, bar) = (stop.clone(), bar.clone());
        std::thread::spawn(move || {
            let mut phase = String::new();
            while !stop.load(Ordering::Relaxed) {
                let (label, done, total) = progress.read();
                if label != phase {
                    bar.reset();
                    phase = label.clone();
                }
                bar.set_message(label);
                bar.set_length(total);
                bar.set_position(done.min(total));
                if total > 0 && bar.is_hidden() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    Box::new(move || {
        stop.store(true, Ordering::Relaxed);
        let _ = thread.join();
        bar.finish_and_clear();
    })
}
