//! The C ABI's message functions driven by a little byte-code, checked
//! against a model: four `zmq_msg_t` slots, each closed or holding known
//! bytes. Every call's result, size and content must match the model, and
//! every buffer lent with `zmq_msg_init_data` must be freed exactly once, by
//! the time the last message sharing it is closed.

use crate::message::{
    zmq_msg_close, zmq_msg_copy, zmq_msg_data, zmq_msg_get, zmq_msg_gets, zmq_msg_init, zmq_msg_init_data,
    zmq_msg_init_size, zmq_msg_more, zmq_msg_move, zmq_msg_set, zmq_msg_size, zmq_msg_t,
};
use std::cell::Cell;
use std::ffi::c_void;

const SLOTS: usize = 4;

thread_local! {
    /// Lent buffers not yet freed, by the free function's hint.
    static LENT: Cell<u64> = const { Cell::new(0) };
    static FREED: Cell<u64> = const { Cell::new(0) };
}

unsafe extern "C" fn free_lent(data: *mut c_void, hint: *mut c_void) {
    let len = hint as usize;
    if !data.is_null() {
        // SAFETY: `data` came from Box::into_raw of a boxed slice of `len` bytes
        // (see op 2), and the library calls this once per lent buffer.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data as *mut u8, len)) });
    }
    FREED.with(|f| f.set(f.get() + 1));
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

struct Slots {
    msgs: Box<[zmq_msg_t; SLOTS]>,
    model: [Option<Vec<u8>>; SLOTS],
    /// init_size'd and never shared: the caller may write through zmq_msg_data.
    exclusive: [bool; SLOTS],
}

impl Slots {
    fn ptr(&mut self, i: usize) -> *mut zmq_msg_t {
        &mut self.msgs[i]
    }

    fn check(&mut self, i: usize) {
        let p = self.ptr(i);
        // SAFETY: `p` points at one of our zeroed-then-managed zmq_msg_t slots;
        // the functions check the slot's tag themselves.
        unsafe {
            match &self.model[i] {
                Some(want) => {
                    assert_eq!(zmq_msg_size(p), want.len(), "size of slot {i}");
                    let d = zmq_msg_data(p) as *const u8;
                    assert!(!d.is_null() || want.is_empty(), "data of a live message");
                    if !want.is_empty() {
                        let got = std::slice::from_raw_parts(d, want.len());
                        assert_eq!(got, &want[..], "content of slot {i}");
                    }
                    assert_eq!(zmq_msg_more(p), 0);
                }
                None => {
                    assert_eq!(zmq_msg_close(p), -1, "closing a closed slot {i} must fail");
                    assert_eq!(errno(), libc::EFAULT);
                    assert!(zmq_msg_data(p).is_null(), "data of a closed slot {i}");
                }
            }
        }
    }
}

pub fn capi_msg(data: &[u8]) {
    let mut s = Slots {
        // SAFETY: zmq_msg_t is plain bytes; all-zero is "never initialised".
        msgs: Box::new(unsafe { std::mem::zeroed() }),
        model: Default::default(),
        exclusive: [false; SLOTS],
    };
    let lent_before = LENT.with(Cell::get);
    let freed_before = FREED.with(Cell::get);
    let mut it = data.iter().copied();
    while let Some(op) = it.next() {
        let a = usize::from(op >> 4) % SLOTS;
        let b = usize::from(op >> 6) % SLOTS;
        let (pa, pb) = (s.ptr(a), s.ptr(b));
        // SAFETY (every call below): pa/pb point at our slots; the library
        // validates their tags; lent buffers live until free_lent runs.
        unsafe {
            match op & 0x0F {
                0 => {
                    if s.model[a].is_some() {
                        assert_eq!(zmq_msg_close(pa), 0);
                    }
                    assert_eq!(zmq_msg_init(pa), 0);
                    s.model[a] = Some(Vec::new());
                    s.exclusive[a] = false;
                }
                1 => {
                    let hi = usize::from(it.next().unwrap_or(0));
                    let size = hi * hi + usize::from(it.next().unwrap_or(0));
                    if s.model[a].is_some() {
                        assert_eq!(zmq_msg_close(pa), 0);
                    }
                    assert_eq!(zmq_msg_init_size(pa, size), 0);
                    s.model[a] = Some(vec![0; size]);
                    s.exclusive[a] = true;
                }
                2 => {
                    let len = usize::from(it.next().unwrap_or(0));
                    let bytes: Vec<u8> = it.by_ref().take(len).collect();
                    if s.model[a].is_some() {
                        assert_eq!(zmq_msg_close(pa), 0);
                    }
                    let n = bytes.len();
                    let raw = Box::into_raw(bytes.clone().into_boxed_slice()) as *mut u8;
                    LENT.with(|l| l.set(l.get() + 1));
                    let rc = zmq_msg_init_data(pa, raw as *mut c_void, n, Some(free_lent), n as *mut c_void);
                    assert_eq!(rc, 0);
                    s.model[a] = Some(bytes);
                    s.exclusive[a] = false;
                }
                3 => {
                    let rc = zmq_msg_close(pa);
                    assert_eq!(rc == 0, s.model[a].is_some(), "close result for slot {a}");
                    s.model[a] = None;
                    s.exclusive[a] = false;
                }
                4 => {
                    let rc = zmq_msg_copy(pb, pa);
                    assert_eq!(rc == 0, s.model[a].is_some(), "copy result");
                    if rc == 0 {
                        s.model[b] = s.model[a].clone();
                        if a != b {
                            s.exclusive[a] = false;
                            s.exclusive[b] = false;
                        }
                    }
                }
                5 => {
                    let rc = zmq_msg_move(pb, pa);
                    assert_eq!(rc == 0, s.model[a].is_some(), "move result");
                    if rc == 0 && a != b {
                        s.model[b] = s.model[a].replace(Vec::new());
                        s.exclusive[b] = s.exclusive[a];
                        s.exclusive[a] = false;
                    }
                }
                6 => {
                    // Write through zmq_msg_data where the caller owns the bytes.
                    let fill = it.next().unwrap_or(0);
                    if s.exclusive[a] {
                        let want = s.model[a].as_mut().unwrap();
                        let d = zmq_msg_data(pa) as *mut u8;
                        if !want.is_empty() {
                            std::ptr::write_bytes(d, fill, want.len());
                            want.iter_mut().for_each(|x| *x = fill);
                        }
                    }
                }
                7 => {
                    let prop = i32::from(it.next().unwrap_or(0)) - 8;
                    let rc = zmq_msg_get(pa, prop);
                    if s.model[a].is_none() {
                        assert_eq!(rc, -1);
                    }
                    let rc = zmq_msg_set(pa, prop, 1);
                    assert_eq!(rc, -1, "no property is settable");
                }
                8 => {
                    let len = usize::from(it.next().unwrap_or(0) % 32);
                    let mut name: Vec<u8> = it.by_ref().take(len).collect();
                    name.push(0);
                    let v = zmq_msg_gets(pa, name.as_ptr() as *const libc::c_char);
                    // A message not received from a socket has no properties.
                    assert!(v.is_null());
                }
                9 => {
                    // NULL pointers are refused, never dereferenced.
                    assert_eq!(zmq_msg_close(std::ptr::null_mut()), -1);
                    assert_eq!(zmq_msg_size(std::ptr::null()), 0);
                    assert!(zmq_msg_data(std::ptr::null_mut()).is_null());
                    assert_eq!(zmq_msg_copy(pa, std::ptr::null_mut()), -1);
                }
                _ => s.check(a),
            }
        }
    }
    for i in 0..SLOTS {
        s.check(i);
        if s.model[i].is_some() {
            // SAFETY: a live slot of ours.
            assert_eq!(unsafe { zmq_msg_close(s.ptr(i)) }, 0);
        }
    }
    let lent = LENT.with(Cell::get) - lent_before;
    let freed = FREED.with(Cell::get) - freed_before;
    assert_eq!(lent, freed, "every lent buffer freed exactly once");
}
