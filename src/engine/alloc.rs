//! A QuickJS allocator that enforces the run's heap cap itself, so the host learns about an
//! out-of-memory condition even when guest code catches the resulting exception.

use rquickjs::allocator::Allocator;
use std::alloc::{self, Layout};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

const ALIGN: usize = 16;
const HEADER: usize = 16;

/// Heap accounting shared between the allocator (owned by the runtime) and the run.
#[derive(Debug, Default)]
pub(crate) struct HeapMeter {
    used: AtomicUsize,
    peak: AtomicUsize,
    limit: AtomicUsize,
    exhausted: AtomicBool,
}

impl HeapMeter {
    pub(crate) fn new(limit: usize) -> Arc<Self> {
        Arc::new(HeapMeter {
            limit: AtomicUsize::new(limit),
            ..Default::default()
        })
    }
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
    /// True once any allocation was refused because of the cap.
    pub(crate) fn exhausted(&self) -> bool {
        self.exhausted.load(Ordering::Relaxed)
    }
    /// Starts measuring the peak again from the heap in use now.
    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.used(), Ordering::Relaxed);
    }
    pub(crate) fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    fn reserve(&self, bytes: usize) -> bool {
        let used = self.used.load(Ordering::Relaxed);
        let limit = self.limit.load(Ordering::Relaxed);
        match used.checked_add(bytes) {
            Some(total) if total <= limit => {
                // One runtime is only ever used by one thread at a time, so plain stores suffice.
                self.used.store(total, Ordering::Relaxed);
                if total > self.peak.load(Ordering::Relaxed) {
                    self.peak.store(total, Ordering::Relaxed);
                }
                true
            }
            _ => {
                self.exhausted.store(true, Ordering::Relaxed);
                false
            }
        }
    }

    fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

pub(crate) struct MeteredAllocator {
    meter: Arc<HeapMeter>,
}

impl MeteredAllocator {
    pub(crate) fn new(meter: Arc<HeapMeter>) -> Self {
        MeteredAllocator { meter }
    }
}

/// `size` rounded up to the alignment; `None` on overflow.
fn round_up(size: usize) -> Option<usize> {
    size.checked_add(ALIGN - 1).map(|s| s & !(ALIGN - 1))
}

/// The layout of a block with `size` usable bytes behind its header.
fn layout_for(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, ALIGN).ok()
}

/// The usable size recorded in a block's header.
///
/// # Safety
/// `user` must be a pointer this allocator returned (header included) and not yet freed.
unsafe fn stored_size(user: *mut u8) -> usize {
    // SAFETY: per the contract `user` is `HEADER` bytes into a live block whose first, 16-byte
    // aligned word holds the usable size, written when the block was handed out.
    unsafe { user.sub(HEADER).cast::<usize>().read() }
}

/// Writes a block's header and returns the pointer handed to QuickJS.
///
/// # Safety
/// `base` must be the non-null start of a live block allocated with `layout_for(size)`.
unsafe fn finish_block(base: *mut u8, size: usize) -> *mut u8 {
    // SAFETY: per the contract the block starts at `base`, is `ALIGN`-aligned and holds
    // `HEADER + size` bytes, so the header word and the returned offset are inside it.
    unsafe {
        base.cast::<usize>().write(size);
        base.add(HEADER)
    }
}

// SAFETY: every block carries a `HEADER`-byte header holding its usable size; returned pointers
// are `ALIGN` (16) aligned, more than `usize` needs, and address at least the requested size;
// `usable_size`, `dealloc` and `realloc` read the size from that header, and free or resize with
// the same layout the block was allocated with.
unsafe impl Allocator for MeteredAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        self.allocate(size, false)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        match count.checked_mul(size) {
            Some(total) => self.allocate(total, true),
            None => std::ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        // SAFETY: the trait's contract: `ptr` is a live block of this allocator.
        let size = unsafe { stored_size(ptr) };
        self.meter.release(size + HEADER);
        if let Some(layout) = layout_for(size) {
            // SAFETY: the block starts `HEADER` bytes before `ptr` and was allocated with
            // `layout_for(size)` by the global allocator.
            unsafe { alloc::dealloc(ptr.sub(HEADER), layout) };
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.allocate(new_size, false);
        }
        let Some(new_size) = round_up(new_size.max(1)) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the trait's contract: `ptr` is a live block of this allocator.
        let old_size = unsafe { stored_size(ptr) };
        if new_size > old_size && !self.meter.reserve(new_size - old_size) {
            return std::ptr::null_mut();
        }
        let (Some(old_layout), Some(_)) = (layout_for(old_size), layout_for(new_size)) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the block starts `HEADER` bytes before `ptr` and was allocated with
        // `old_layout`; the new size is non-zero and, as `layout_for(new_size)` succeeded, a
        // valid size for a layout of that alignment.
        let base = unsafe { alloc::realloc(ptr.sub(HEADER), old_layout, new_size + HEADER) };
        if base.is_null() {
            if new_size > old_size {
                self.meter.release(new_size - old_size);
            }
            return std::ptr::null_mut();
        }
        if new_size < old_size {
            self.meter.release(old_size - new_size);
        }
        // SAFETY: `base` is the non-null start of the block, now of layout `layout_for(new_size)`.
        unsafe { finish_block(base, new_size) }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        if ptr.is_null() {
            0
        } else {
            // SAFETY: the trait's contract: `ptr` is a live block of this allocator.
            unsafe { stored_size(ptr) }
        }
    }
}

impl MeteredAllocator {
    fn allocate(&mut self, size: usize, zeroed: bool) -> *mut u8 {
        let Some(size) = round_up(size.max(1)) else {
            return std::ptr::null_mut();
        };
        let Some(layout) = layout_for(size) else {
            return std::ptr::null_mut();
        };
        if !self.meter.reserve(size + HEADER) {
            return std::ptr::null_mut();
        }
        // SAFETY: `layout` has a non-zero size (at least `HEADER`).
        let base = unsafe {
            if zeroed {
                alloc::alloc_zeroed(layout)
            } else {
                alloc::alloc(layout)
            }
        };
        if base.is_null() {
            self.meter.release(size + HEADER);
            return std::ptr::null_mut();
        }
        // SAFETY: `base` is the non-null start of a block of layout `layout_for(size)`.
        unsafe { finish_block(base, size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_sized_and_metered() {
        let meter = HeapMeter::new(1 << 20);
        let mut a = MeteredAllocator::new(meter.clone());
        let p = a.alloc(10);
        assert!(!p.is_null());
        assert_eq!(p as usize % ALIGN, 0);
        // SAFETY: `p` is a live block of `a`.
        assert_eq!(unsafe { MeteredAllocator::usable_size(p) }, 16);
        assert_eq!(meter.used(), 16 + HEADER);
        // SAFETY: `p` is a live block of `a`; the grown block replaces it.
        let p = unsafe { a.realloc(p, 100) };
        assert!(!p.is_null());
        assert_eq!(meter.used(), 112 + HEADER);
        // SAFETY: as above.
        let p = unsafe { a.realloc(p, 1) };
        assert_eq!(meter.used(), 16 + HEADER);
        assert_eq!(meter.peak(), 112 + HEADER);
        let z = a.calloc(4, 8);
        // SAFETY: `z` is a live, zeroed block of at least 32 bytes.
        assert!(unsafe { std::slice::from_raw_parts(z, 32) }
            .iter()
            .all(|b| *b == 0));
        // SAFETY: both are live blocks of `a`, each freed once.
        unsafe {
            a.dealloc(p);
            a.dealloc(z);
        }
        assert_eq!(meter.used(), 0);
        assert!(!meter.exhausted());
    }

    #[test]
    fn the_cap_refuses_and_is_remembered() {
        let meter = HeapMeter::new(256);
        let mut a = MeteredAllocator::new(meter.clone());
        let p = a.alloc(100);
        assert!(!p.is_null());
        // Growing past the cap fails and leaves the block and the count as they were.
        // SAFETY: `p` is a live block of `a`.
        assert!(unsafe { a.realloc(p, 1000) }.is_null());
        assert_eq!(meter.used(), 112 + HEADER);
        assert!(meter.exhausted());
        assert!(a.alloc(200).is_null());
        assert!(a.calloc(usize::MAX, 2).is_null());
        // SAFETY: `p` is still live (the failed realloc kept it), freed once.
        unsafe { a.dealloc(p) };
        assert_eq!(meter.used(), 0);
    }
}
