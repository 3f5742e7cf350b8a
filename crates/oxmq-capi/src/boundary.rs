//! The panic boundary and errno plumbing shared by every export.

/// A libzmq errno value carried out of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Errno(pub(crate) i32);

impl From<oxmq::Error> for Errno {
    #[inline]
    fn from(e: oxmq::Error) -> Errno {
        Errno(e.errno())
    }
}

/// What an export's body returns before it is turned into C's -1/errno form.
pub(crate) type CResult<T> = Result<T, Errno>;

pub(crate) const EFAULT: Errno = Errno(oxmq::errno::EFAULT);
pub(crate) const EINVAL: Errno = Errno(oxmq::errno::EINVAL);
pub(crate) const ENOTSOCK: Errno = Errno(oxmq::errno::ENOTSOCK);

/// Record `e` as this thread's error, in C's `errno` (where libzmq keeps it too).
#[cold]
pub(crate) fn set_errno(e: Errno) {
    // SAFETY: `__errno_location` returns a valid pointer to this thread's errno.
    unsafe { *libc::__errno_location() = e.0 };
}

/// This thread's `errno`.
#[cfg(test)]
pub(crate) fn last_errno() -> i32 {
    // SAFETY: `__errno_location` returns a valid pointer to this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Called when a panic was caught at the boundary.
#[cold]
pub(crate) fn panicked() {
    set_errno(EFAULT);
}

/// Run `$body` so that a panic cannot unwind into C: a panic makes the export
/// return `$default` with errno EFAULT. Zero cost when nothing panics.
macro_rules! ffi_boundary {
    ($default:expr, $body:block) => {{
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(v) => v,
            Err(_) => {
                $crate::boundary::panicked();
                $default
            }
        }
    }};
}

/// An export returning `int`: `$body` yields `CResult<c_int>`; an error sets
/// errno and returns -1, a panic returns -1 with errno EFAULT.
macro_rules! ffi_int {
    ($body:block) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> $crate::boundary::CResult<::std::ffi::c_int> { $body },
        )) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                $crate::boundary::set_errno(e);
                -1
            }
            Err(_) => {
                $crate::boundary::panicked();
                -1
            }
        }
    };
}

/// An export returning a pointer: `$body` yields `CResult<*mut T>`; an error
/// sets errno and returns NULL, a panic returns NULL with errno EFAULT.
macro_rules! ffi_ptr {
    ($body:block) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| -> $crate::boundary::CResult<_> { $body })) {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                $crate::boundary::set_errno(e);
                ::std::ptr::null_mut()
            }
            Err(_) => {
                $crate::boundary::panicked();
                ::std::ptr::null_mut()
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_default_and_efault() {
        let v: i32 = ffi_boundary!(-1, {
            if last_errno() >= 0 {
                panic!("boom");
            }
            0
        });
        assert_eq!(v, -1);
        assert_eq!(last_errno(), EFAULT.0);
    }

    #[test]
    fn errors_set_errno() {
        let v: i32 = ffi_int!({ Err(EINVAL) });
        assert_eq!(v, -1);
        assert_eq!(last_errno(), EINVAL.0);
    }
}
