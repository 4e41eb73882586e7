//! Handles: the `long`s Java holds for native objects.
//!
//! A handle is an id into a registry, not a pointer, so a closed, forged or stale handle is an
//! error (an `IllegalStateException` in Java), never a dangling dereference. Ids are unique across
//! registries, so a handle of another kind (a frozen state's given to a join call) is one too,
//! never another live object of this kind. Each object sits
//! behind its own mutex: calls on different objects (operators in different slots) run in
//! parallel, and a panic while an object is in use poisons it, so later calls report that the
//! object is unusable instead of working on half-updated state.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::errors::{NativeError, NativeResult};

/// The next handle of any registry.
static NEXT_HANDLE: AtomicI64 = AtomicI64::new(1);

/// A registry of native objects of one kind.
pub struct Registry<T> {
    kind: &'static str,
    objects: Mutex<BTreeMap<i64, Arc<Mutex<T>>>>,
}

impl<T> Registry<T> {
    /// An empty registry; `kind` names the objects in error messages.
    pub const fn new(kind: &'static str) -> Registry<T> {
        Registry {
            kind,
            objects: Mutex::new(BTreeMap::new()),
        }
    }

    fn objects(&self) -> MutexGuard<'_, BTreeMap<i64, Arc<Mutex<T>>>> {
        // The map is only ever inserted into or removed from; a poisoned lock leaves it whole.
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `object`; returns its handle (never 0).
    pub fn insert(&self, object: T) -> i64 {
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        self.objects().insert(handle, Arc::new(Mutex::new(object)));
        handle
    }

    /// Runs `f` on the object of `handle`.
    pub fn with<R>(
        &self,
        handle: i64,
        f: impl FnOnce(&mut T) -> NativeResult<R>,
    ) -> NativeResult<R> {
        let object = self.objects().get(&handle).cloned().ok_or_else(|| {
            NativeError::IllegalState(format!(
                "{} handle {handle} is closed or invalid",
                self.kind
            ))
        })?;
        let mut guard = object.lock().map_err(|_| {
            NativeError::IllegalState(format!(
                "{} {handle} is unusable: an earlier call panicked while using it",
                self.kind
            ))
        })?;
        f(&mut guard)
    }

    /// Drops the object of `handle` (once no call is using it); false if there was none.
    pub fn remove(&self, handle: i64) -> bool {
        self.objects().remove(&handle).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked() {
        let r: Registry<Vec<u8>> = Registry::new("Thing");
        let h = r.insert(vec![1]);
        assert_ne!(h, 0);
        r.with(h, |v| {
            v.push(2);
            Ok(())
        })
        .unwrap();
        assert_eq!(r.with(h, |v| Ok(v.len())).unwrap(), 2);
        assert!(r.remove(h));
        assert!(!r.remove(h));
        let e = r.with(h, |_| Ok(())).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Thing handle {h} is closed or invalid")
        );
        assert!(r.with(12345, |_| Ok(())).is_err());
    }

    #[test]
    fn a_handle_of_another_kind_is_refused() {
        let joins: Registry<&str> = Registry::new("KeyGroupJoin");
        let frozen: Registry<&str> = Registry::new("FrozenState");
        let (j, f) = (joins.insert("join"), frozen.insert("frozen"));
        let e = joins.with(f, |_| Ok(())).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("KeyGroupJoin handle {f} is closed or invalid")
        );
        assert!(frozen.with(j, |_| Ok(())).is_err());
        assert!(!joins.remove(f) && !frozen.remove(j));
        assert_eq!(joins.with(j, |o| Ok(*o)).unwrap(), "join");
    }

    #[test]
    fn a_panic_poisons_the_object() {
        let r: Registry<u8> = Registry::new("Thing");
        let h = r.insert(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            r.with(h, |_| -> NativeResult<()> { panic!("boom") })
        }));
        assert!(caught.is_err());
        let e = r.with(h, |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("unusable"), "{e}");
        assert!(r.remove(h));
    }
}
