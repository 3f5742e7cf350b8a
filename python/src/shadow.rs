//! Shadowing, as pyzmq's `Context.shadow(address)` / `Socket.shadow(address)`:
//! several Python objects over one native context or socket. The "address"
//! pyzmq hands around (`.underlying`) is the address of the shared state
//! here; a registry of weak references turns it back into that state while
//! it is alive, and an address that is not (or no longer) registered is
//! refused rather than dereferenced.
//!
//! Fork: the registry's lock is only ever taken with the GIL held (making a
//! context or socket, shadowing one, and the shared state's drop, which runs
//! as the last Python object over it is deallocated), and a process forks
//! with the GIL held by the forking thread, so no other thread holds the
//! lock then: a child's registry is never left locked.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

pub(crate) struct Registry<T> {
    map: Mutex<BTreeMap<usize, Weak<T>>>,
}

impl<T> Registry<T> {
    pub(crate) const fn new() -> Self {
        Registry { map: Mutex::new(BTreeMap::new()) }
    }

    /// Register `shared` and return its address.
    pub(crate) fn add(&self, shared: &Arc<T>) -> usize {
        let addr = Arc::as_ptr(shared) as usize;
        self.map.lock().unwrap_or_else(|e| e.into_inner()).insert(addr, Arc::downgrade(shared));
        addr
    }

    /// The live state at `addr`, if any.
    pub(crate) fn get(&self, addr: usize) -> Option<Arc<T>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).get(&addr).and_then(Weak::upgrade)
    }

    /// Called from the state's `Drop`.
    pub(crate) fn remove(&self, addr: usize) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).remove(&addr);
    }
}
