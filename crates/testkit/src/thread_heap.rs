//! The heap a thread holds, counted by a test binary's allocator: a test measures what a
//! piece of code keeps on the thread that runs it (the parser of a hostile page, a crawl's
//! engine), whatever other tests do meanwhile on theirs. A test binary installs it with
//! `#[global_allocator] static HEAP: Counting = Counting;` and measures with
//! [`peak_during`]. Memory freed on another thread than the one that allocated it counts
//! there, so a thread's count can drift below what it holds: only peaks are compared.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// The system allocator, counting each thread's live bytes and their peak.
pub struct Counting;

fn add(delta: isize) {
    // `try_with`: a thread being torn down has no counters any more.
    let _ = LIVE.try_with(|live| {
        let v = live.get() + delta;
        live.set(v);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(v)));
    });
}

// SAFETY: every call is passed to the system allocator unchanged; the counting touches
// only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        add(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        q
    }
}

/// `f`'s result and the most bytes this thread held during it beyond what it held before.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - before).max(0) as usize)
}
