//! The readers a spec read from a stream goes through: at most `MAX_INPUT_BYTES` of it, UTF-8
//! only, a leading byte-order mark dropped.

use std::io::Read;

use crate::text::limits::{grouped, MAX_INPUT_BYTES};

/// The UTF-8 byte-order mark, which some editors put at the start of a file.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A reader that fails once it has given `left` bytes and more follow: over-long input is
/// refused, not read to its end.
pub(super) struct Limited<R> {
    pub(super) inner: R,
    pub(super) left: usize,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // At the limit: one more byte tells the end of the input from more of it.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(format!(
                    "the input is longer than {} bytes (diffattn::text::limits::MAX_INPUT_BYTES)",
                    grouped(MAX_INPUT_BYTES)
                ))),
            };
        }
        let n = buf.len().min(self.left);
        let read = self.inner.read(&mut buf[..n])?;
        self.left -= read;
        Ok(read)
    }
}

/// A reader that fails at the first byte that is not UTF-8 (RFC 8259 asks JSON to be), or at an
/// end that cuts a character short. It copies nothing: each read is checked where it lies, and
/// only the start of a character cut by the end of a read (at most 3 bytes) is kept.
pub(super) struct Utf8Only<R> {
    inner: R,
    /// The start of a character the last read ended inside of.
    carry: Vec<u8>,
    /// Where `carry` starts in the input.
    carry_at: usize,
    /// Bytes given so far.
    offset: usize,
}

impl<R: Read> Utf8Only<R> {
    pub(super) fn new(inner: R) -> Utf8Only<R> {
        Utf8Only {
            inner,
            carry: Vec::with_capacity(4),
            carry_at: 0,
            offset: 0,
        }
    }
}

fn not_utf8(at: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("neither JSON (not UTF-8 at byte {at}) nor a safetensors file"),
    )
}

impl<R: Read> Read for Utf8Only<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !self.carry.is_empty() {
            return Err(not_utf8(self.carry_at));
        }
        // First finish the character the last read cut, byte by byte (a character is at most
        // four bytes, so this ends within three).
        let mut i = 0;
        while !self.carry.is_empty() && i < n {
            self.carry.push(buf[i]);
            i += 1;
            match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.clear(),
                Err(e) if e.error_len().is_some() => return Err(not_utf8(self.carry_at)),
                Err(_) => {}
            }
        }
        if self.carry.is_empty() && i < n {
            match std::str::from_utf8(&buf[i..n]) {
                Ok(_) => {}
                Err(e) if e.error_len().is_some() => {
                    return Err(not_utf8(self.offset + i + e.valid_up_to()))
                }
                Err(e) => {
                    self.carry_at = self.offset + i + e.valid_up_to();
                    self.carry.extend_from_slice(&buf[i + e.valid_up_to()..n]);
                }
            }
        }
        self.offset += n;
        Ok(n)
    }
}

/// A reader that drops a leading UTF-8 byte-order mark.
pub(super) struct SkipBom<R> {
    /// The first bytes, when they were not a byte-order mark, still to be given.
    head: Vec<u8>,
    inner: R,
}

impl<R: Read> SkipBom<R> {
    pub(super) fn new(mut inner: R) -> std::io::Result<SkipBom<R>> {
        let mut head = Vec::with_capacity(BOM.len());
        while head.len() < BOM.len() {
            let mut byte = [0u8; 1];
            match inner.read(&mut byte) {
                Ok(0) => break,
                Ok(_) => head.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if !BOM.starts_with(&head) {
                break;
            }
        }
        if head == BOM {
            head.clear();
        }
        head.reverse();
        Ok(SkipBom { head, inner })
    }
}

impl<R: Read> Read for SkipBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.head.pop() {
            Some(byte) => {
                buf[0] = byte;
                Ok(1)
            }
            None => self.inner.read(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(mut reader: impl Read) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        reader.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn the_limited_reader_gives_up_to_its_limit_and_fails_past_it() {
        let limited = |text: &'static [u8], left| Limited { inner: text, left };
        assert_eq!(read_all(limited(b"1234", 4)).unwrap(), b"1234");
        let e = read_all(limited(b"12345", 4)).unwrap_err();
        assert!(e.to_string().contains("MAX_INPUT_BYTES"), "{e}");
    }

    /// Reads `bytes` through `Utf8Only`, `step` bytes per read, as serde_json (one at a time)
    /// or a buffered reader would.
    fn utf8_only(bytes: &'static [u8], step: usize) -> std::io::Result<Vec<u8>> {
        struct Steps(&'static [u8], usize);
        impl Read for Steps {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        read_all(Utf8Only::new(Steps(bytes, step)))
    }

    #[test]
    fn the_utf8_reader_passes_utf8_and_stops_at_the_first_byte_that_is_not() {
        // "é" is C3 A9, "世" E4 B8 96, "👍" F0 9F 91 8D: every cut of them across reads.
        let good = "a é 世 👍 z".as_bytes();
        for step in 1..=good.len() {
            assert_eq!(utf8_only("a é 世 👍 z".as_bytes(), step).unwrap(), good);
        }
        for step in [1, 2, 3, 64] {
            // A lone continuation byte at 2; a character cut short by another at 2; a
            // character cut short by the end at 2.
            for bad in [&b"ab\x80cd"[..], b"ab\xe4\xb8x", b"ab\xf0\x9f"] {
                let bad: &'static [u8] = bad;
                let e = utf8_only(bad, step).unwrap_err();
                assert!(
                    e.to_string().contains("not UTF-8 at byte 2"),
                    "{step} {bad:?}: {e}"
                );
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_nothing_else() {
        let skip = |text: &'static [u8]| read_all(SkipBom::new(text).unwrap()).unwrap();
        assert_eq!(skip(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(skip(b"{}"), b"{}");
        // A prefix of the mark followed by something else is kept as it is.
        assert_eq!(skip(b"\xEF\xBB{"), b"\xEF\xBB{");
        assert_eq!(skip(b"\xEF"), b"\xEF");
        assert_eq!(skip(b""), b"");
    }
}
