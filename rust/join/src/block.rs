//! The heap block of a compact group: bytes with room to change in place.
//!
//! A compact group changes one entry at a time, and an update is two changes: the old row's
//! entry removed, the new row's appended. Kept exactly sized, every change was a `realloc`, and
//! that was a tenth of the join's time (`cargo bench -p cdcjoin-join --bench join`): jemalloc
//! looks the block up in its radix tree to learn its size, then usually moves it to another size
//! class. A [`Block`] allocates the size class its bytes fall in ([`size_class`]: jemalloc's own
//! classes, four per power of two, so the memory is what the allocator hands out anyway), changes
//! in place while its bytes fit, and after a removal keeps room for the bytes removed and no more.
//! An update of a row no longer than the old one then allocates nothing.
//!
//! The block is a pointer and two `u32`s, so a [`Group`](crate::group::Group) stays 16 bytes.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut, Range};
use std::ptr::NonNull;

/// Bytes in one heap allocation of [`Block::capacity`] bytes (none while the capacity is 0).
pub struct Block {
    ptr: NonNull<u8>,
    len: u32,
    cap: u32,
}

// SAFETY: a block owns its allocation exclusively, as a `Box<[u8]>` does.
unsafe impl Send for Block {}
// SAFETY: shared references only read the bytes.
unsafe impl Sync for Block {}

/// The allocator's size class for `n` bytes: 8 and 16, multiples of 16 up to 128, then four
/// classes per power of two (160, 192, 224, 256, 320, ...). Equal to jemalloc's small and large
/// classes, which the native library allocates with.
pub fn size_class(n: usize) -> usize {
    match n {
        0 => 0,
        1..=8 => 8,
        9..=128 => n.next_multiple_of(16),
        _ => n.next_multiple_of(1 << ((n - 1).ilog2() - 2)),
    }
}

impl Block {
    /// A block holding a copy of `bytes`, in their size class.
    pub fn from_slice(bytes: &[u8]) -> Block {
        let mut b = Block::default();
        b.append(&[bytes]);
        b
    }

    /// A block of `bytes`: their allocation taken over when it is within their size class, else
    /// a copy in it.
    pub fn from_vec(bytes: Vec<u8>) -> Block {
        if bytes.capacity() == 0 || bytes.capacity() > size_class(bytes.len()) {
            return Block::from_slice(&bytes);
        }
        // Checked before the vector is taken over: a length or capacity cut to 32 bits would free
        // its allocation with another layout.
        let cap = u32::try_from(bytes.capacity()).expect("a compact group holds less than 4 GiB");
        let mut bytes = std::mem::ManuallyDrop::new(bytes);
        Block {
            // SAFETY: a vector with capacity has a non-null pointer to `capacity` bytes it owns;
            // the vector is not dropped, so the block owns them now, with the same layout.
            ptr: unsafe { NonNull::new_unchecked(bytes.as_mut_ptr()) },
            len: bytes.len() as u32,
            cap,
        }
    }

    /// Bytes allocated (the heap the block holds).
    pub fn capacity(&self) -> usize {
        self.cap as usize
    }

    /// Bytes allocated beyond the size class of the length: the room kept after a removal. (The
    /// class's own rounding is the allocator's, there whatever the block does.)
    pub fn spare(&self) -> usize {
        self.capacity().saturating_sub(size_class(self.len()))
    }

    /// Appends `parts`, one after another, growing the block to the size class of its new length
    /// if they do not fit.
    pub fn append(&mut self, parts: &[&[u8]]) {
        let added: usize = parts.iter().map(|p| p.len()).sum();
        let len = self.len as usize + added;
        if len > self.capacity() {
            self.resize_to(size_class(len));
        }
        let mut at = self.len as usize;
        for p in parts {
            // SAFETY: `at + p.len() <= len <= cap`, inside the allocation; `p` is a slice of
            // another allocation (the caller cannot hold a borrow of this block while mutating it).
            unsafe {
                std::ptr::copy_nonoverlapping(p.as_ptr(), self.ptr.as_ptr().add(at), p.len())
            };
            at += p.len();
        }
        self.len = len as u32;
    }

    /// Removes the bytes of `range`, moving the ones after it down. The block keeps room for as
    /// many bytes again (an update appends the new row next) and no more: it shrinks to the size
    /// class of what is left plus the bytes removed, and is freed once empty.
    pub fn remove(&mut self, range: Range<usize>) {
        let len = self.len as usize;
        assert!(
            range.start <= range.end && range.end <= len,
            "range out of the block"
        );
        self.copy_within(range.end.., range.start);
        let left = len - range.len();
        self.len = left as u32;
        let room = match left {
            0 => 0,
            _ => size_class(len),
        };
        if room < self.capacity() {
            self.resize_to(room);
        }
    }

    /// Reallocates to `cap` bytes (at least the length), freeing the allocation at 0.
    ///
    /// Not with `realloc`: a block only changes size class, which jemalloc never does in place for
    /// small sizes, so its `rallocx` allocates, copies and frees as this does, after first looking
    /// the old size up in its radix tree, which `realloc` is not told: a cache miss on a large
    /// state (8% of the join's task thread in a `perf` profile), where a sized free goes to the
    /// thread's cache.
    fn resize_to(&mut self, cap: usize) {
        debug_assert!(cap >= self.len as usize);
        let cap32 = u32::try_from(cap).expect("a compact group holds less than 4 GiB");
        let ptr = match cap {
            0 => NonNull::dangling(),
            _ => {
                let new = Layout::array::<u8>(cap).expect("a valid layout");
                // SAFETY: `new` has a non-zero size.
                let p =
                    NonNull::new(unsafe { alloc(new) }).unwrap_or_else(|| handle_alloc_error(new));
                // SAFETY: the block's first `len` bytes are initialized (none behind a dangling
                // pointer) and fit in the new allocation (`cap >= len`).
                unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), p.as_ptr(), self.len()) };
                p
            }
        };
        if self.cap > 0 {
            // SAFETY: the block holds an allocation of exactly `self.layout()`, not used again.
            unsafe { dealloc(self.ptr.as_ptr(), self.layout()) };
        }
        self.ptr = ptr;
        self.cap = cap32;
    }

    fn layout(&self) -> Layout {
        Layout::array::<u8>(self.capacity()).expect("a valid layout")
    }
}

impl Default for Block {
    fn default() -> Block {
        Block {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.cap > 0 {
            // SAFETY: the block holds an allocation of exactly `self.layout()`.
            unsafe { dealloc(self.ptr.as_ptr(), self.layout()) };
        }
    }
}

impl Deref for Block {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: the first `len` bytes are initialized (written by `append`), and a dangling
        // pointer is valid for a zero-length slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }
}

impl DerefMut for Block {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `deref`, and the block is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len as usize) }
    }
}

/// A clone has the same bytes and the same capacity (so the same overhead, which the joins'
/// counters add up across copies of a key).
impl Clone for Block {
    fn clone(&self) -> Block {
        let mut b = Block::default();
        b.resize_to(self.capacity());
        b.append(&[self]);
        b
    }
}

/// Two blocks are equal when they hold the same bytes, whatever their capacity.
impl PartialEq for Block {
    fn eq(&self, other: &Block) -> bool {
        **self == **other
    }
}

impl Eq for Block {}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Block")
            .field("bytes", &&**self)
            .field("capacity", &self.cap)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn size_classes_are_jemallocs() {
        let classes: Vec<usize> = [0, 1, 8, 9, 16, 17, 33, 48, 49, 128, 129, 160, 161, 256, 257]
            .iter()
            .map(|&n| size_class(n))
            .collect();
        assert_eq!(
            classes,
            [0, 8, 8, 16, 16, 32, 48, 48, 64, 128, 160, 160, 192, 256, 320]
        );
        assert_eq!(size_class(4097), 5120);
        assert_eq!(size_class(1 << 20), 1 << 20);
    }

    #[test]
    fn an_update_of_the_same_length_keeps_the_allocation() {
        let mut b = Block::from_slice(&[1; 40]);
        b.append(&[&[2; 40]]);
        let (ptr, cap) = (b.ptr, b.capacity());
        b.remove(0..40);
        b.append(&[&[3; 40]]);
        assert_eq!((b.ptr, b.capacity()), (ptr, cap));
        assert_eq!(&b[..], &[[2; 40], [3; 40]].concat()[..]);
    }

    #[test]
    fn emptied_blocks_hold_no_memory() {
        let mut b = Block::from_vec(vec![7; 100]);
        b.remove(0..100);
        assert_eq!((b.len(), b.capacity()), (0, 0));
        b.append(&[&[], &[]]);
        assert_eq!(b.capacity(), 0);
    }

    proptest! {
        /// Any sequence of appends and removals leaves the bytes a `Vec` would hold, in a block
        /// large enough for them, and no larger than the size class of their length after an
        /// append that grew it or of their length and the bytes just removed after a removal.
        #[test]
        fn behaves_as_a_vec(ops in prop::collection::vec((any::<bool>(), 0usize..300, any::<u8>()), 0..60)) {
            let (mut b, mut v) = (Block::default(), Vec::new());
            for (add, n, byte) in ops {
                if add || v.is_empty() {
                    let (part, before) = (vec![byte; n], b.capacity());
                    b.append(&[&part, &[byte]]);
                    v.extend_from_slice(&part);
                    v.push(byte);
                    prop_assert!(b.capacity() == before || b.capacity() == size_class(v.len()));
                } else {
                    let start = n % v.len();
                    let end = (start + n / 3).min(v.len());
                    b.remove(start..end);
                    v.drain(start..end);
                    let room = if v.is_empty() { 0 } else { size_class(v.len() + end - start) };
                    prop_assert!(b.capacity() <= room);
                }
                prop_assert_eq!(&b[..], &v[..]);
                prop_assert!(b.capacity() >= v.len());
                prop_assert_eq!(b.clone(), Block::from_slice(&v));
                prop_assert_eq!(b.clone().capacity(), b.capacity());
            }
        }
    }
}
