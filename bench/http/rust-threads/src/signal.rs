//! SIGTERM and SIGINT without a signal handler.
//!
//! The standard library has no signal API, so the four libc functions needed
//! are declared here by hand (the C library is linked by `std` anyway). The
//! main thread blocks both signals before it spawns any thread, so every
//! thread inherits the blocked mask and the kernel never interrupts a
//! connection thread; it leaves the signal pending for the process instead.
//! The main thread then sleeps in `sigwait`, which takes the pending signal
//! synchronously and returns at once. No handler, no flag, no polling: the
//! exit latency is the time to wake one thread, whatever the connections are
//! doing (idle, half-sent head, half-sent body).

use std::ffi::c_int;

const SIGINT: c_int = 2;
const SIGTERM: c_int = 15;

#[cfg(target_os = "linux")]
const SIG_BLOCK: c_int = 0;
#[cfg(any(
    target_os = "macos",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
))]
const SIG_BLOCK: c_int = 1;
#[cfg(not(any(
    target_os = "linux",
    target_os = "macos",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)))]
compile_error!("SIG_BLOCK is only known here for Linux, macOS and the BSDs");

/// Storage for a `sigset_t`: 128 bytes, 8-aligned, as large as glibc's and
/// musl's (1024 bits) and larger than the BSDs' and macOS's, which only use
/// their own prefix of it. Only ever touched through the libc functions.
#[repr(C, align(8))]
struct SigSet([u8; 128]);

unsafe extern "C" {
    fn sigemptyset(set: *mut SigSet) -> c_int;
    fn sigaddset(set: *mut SigSet, signum: c_int) -> c_int;
    fn pthread_sigmask(how: c_int, set: *const SigSet, old: *mut SigSet) -> c_int;
    fn sigwait(set: *const SigSet, sig: *mut c_int) -> c_int;
}

/// The set {SIGTERM, SIGINT}.
fn term_set() -> SigSet {
    let mut set = SigSet([0; 128]);
    // SAFETY: `set` is writable storage at least as large as `sigset_t`, and
    // both signal numbers are valid, so these calls cannot fail.
    unsafe {
        sigemptyset(&raw mut set);
        sigaddset(&raw mut set, SIGTERM);
        sigaddset(&raw mut set, SIGINT);
    }
    set
}

/// Blocks SIGTERM and SIGINT in the calling thread and in every thread it
/// spawns from now on. Call it before spawning any thread.
pub fn block() -> std::io::Result<()> {
    let set = term_set();
    // SAFETY: `set` was initialised by sigemptyset/sigaddset; a null old-set
    // pointer is allowed.
    let rc = unsafe { pthread_sigmask(SIG_BLOCK, &raw const set, std::ptr::null_mut()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}

/// Sleeps until SIGTERM or SIGINT arrives (both must be blocked by `block`).
pub fn wait() {
    let set = term_set();
    loop {
        let mut sig: c_int = 0;
        // SAFETY: `set` is initialised and `sig` is a valid out-pointer.
        if unsafe { sigwait(&raw const set, &raw mut sig) } == 0 && (sig == SIGTERM || sig == SIGINT) {
            return;
        }
    }
}
