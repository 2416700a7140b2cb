//! SIGTERM and SIGINT (a cancelled job, Ctrl-C): the temporary paths of a download or an
//! unpack under way are removed before the process exits with the conventional 128 + the
//! signal's number (143, 130), so no `.part` file or half-unpacked tree is left behind.
//!
//! The handler itself does one async-signal-safe thing: it writes the signal's number to a
//! socket. A thread blocked reading that socket does the rest outside signal context
//! ([`cell_fetch::cleanup::remove_all`], then exit), where taking a lock and allocating are
//! allowed. A signal the process started with ignored (`nohup`, a background job) stays ignored.

use std::io::Read as _;
use std::os::fd::IntoRawFd as _;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicI32, Ordering};

/// The write end of the socket, for the handler; -1 until [`install`] set it.
static WAKE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    let errno = errno();
    let fd = WAKE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = u8::try_from(sig).unwrap_or(u8::MAX);
        // SAFETY: write(2) is async-signal-safe; `fd` is the non-blocking write end, open for
        // the life of the process; `byte` outlives the call.
        unsafe { libc::write(fd, (&raw const byte).cast(), 1) };
    }
    set_errno(errno);
}

/// Installs the handlers and starts the thread that cleans up and exits.
pub fn install() -> std::io::Result<()> {
    let (reader, writer) = UnixStream::pair()?;
    // A full socket drops a second signal instead of blocking inside the handler.
    writer.set_nonblocking(true)?;
    WAKE.store(writer.into_raw_fd(), Ordering::SeqCst);
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || wait(reader))?;
    for sig in [libc::SIGTERM, libc::SIGINT] {
        handle(sig)?;
    }
    Ok(())
}

/// Sets [`on_signal`] for `sig`, unless the process started with `sig` ignored.
fn handle(sig: libc::c_int) -> std::io::Result<()> {
    // SAFETY: plain sigaction(2) calls on zeroed, then filled, `sigaction` structs; the handler
    // only does async-signal-safe work.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &raw mut old) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if old.sa_sigaction == libc::SIG_IGN {
            return Ok(());
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&raw mut action.sa_mask);
        if libc::sigaction(sig, &raw const action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Blocks until a signal arrives, removes the temporary paths, exits 128 + the signal.
fn wait(mut reader: UnixStream) {
    let mut byte = [0u8; 1];
    if reader.read_exact(&mut byte).is_ok() {
        cell_fetch::cleanup::remove_all();
        std::process::exit(128 + i32::from(byte[0]));
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn errno_slot() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno slot; always valid.
    unsafe { libc::__errno_location() }
}

#[cfg(any(target_os = "macos", target_os = "ios", target_os = "freebsd"))]
fn errno_slot() -> *mut libc::c_int {
    // SAFETY: returns the calling thread's errno slot; always valid.
    unsafe { libc::__error() }
}

/// The interrupted code's errno, which the handler must give back as it found it.
fn errno() -> libc::c_int {
    // SAFETY: the slot is the calling thread's own.
    unsafe { *errno_slot() }
}

fn set_errno(value: libc::c_int) {
    // SAFETY: the slot is the calling thread's own.
    unsafe { *errno_slot() = value }
}
