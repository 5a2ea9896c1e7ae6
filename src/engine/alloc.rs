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
pub struct HeapMeter {
    used: AtomicUsize,
    peak: AtomicUsize,
    limit: AtomicUsize,
    exhausted: AtomicBool,
}

impl HeapMeter {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(HeapMeter {
            limit: AtomicUsize::new(limit),
            ..Default::default()
        })
    }
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
    /// True once any allocation was refused because of the cap.
    pub fn exhausted(&self) -> bool {
        self.exhausted.load(Ordering::Relaxed)
    }
    pub fn set_limit(&self, limit: usize) {
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

pub struct MeteredAllocator {
    meter: Arc<HeapMeter>,
}

impl MeteredAllocator {
    pub fn new(meter: Arc<HeapMeter>) -> Self {
        MeteredAllocator { meter }
    }
}

fn round_up(size: usize) -> Option<usize> {
    size.checked_add(ALIGN - 1).map(|s| s & !(ALIGN - 1))
}

fn layout_for(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(HEADER)?, ALIGN).ok()
}

unsafe fn stored_size(user: *mut u8) -> usize {
    unsafe { user.sub(HEADER).cast::<usize>().read() }
}

// SAFETY: every block carries a 16-byte header holding its usable size, returned pointers are
// 16-byte aligned, and sizes handed to `dealloc`/`realloc` come from that header.
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
        unsafe {
            let size = stored_size(ptr);
            self.meter.release(size + HEADER);
            if let Some(layout) = layout_for(size) {
                alloc::dealloc(ptr.sub(HEADER), layout);
            }
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.allocate(new_size, false);
        }
        let Some(new_size) = round_up(new_size.max(1)) else {
            return std::ptr::null_mut();
        };
        unsafe {
            let old_size = stored_size(ptr);
            if new_size > old_size && !self.meter.reserve(new_size - old_size) {
                return std::ptr::null_mut();
            }
            let (Some(old_layout), Some(_)) = (layout_for(old_size), layout_for(new_size)) else {
                return std::ptr::null_mut();
            };
            let base = alloc::realloc(ptr.sub(HEADER), old_layout, new_size + HEADER);
            if base.is_null() {
                if new_size > old_size {
                    self.meter.release(new_size - old_size);
                }
                return std::ptr::null_mut();
            }
            if new_size < old_size {
                self.meter.release(old_size - new_size);
            }
            base.cast::<usize>().write(new_size);
            base.add(HEADER)
        }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        if ptr.is_null() {
            0
        } else {
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
        // SAFETY: layout has non-zero size.
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
        unsafe {
            base.cast::<usize>().write(size);
            base.add(HEADER)
        }
    }
}
