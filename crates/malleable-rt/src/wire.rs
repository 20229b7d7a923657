//! The frames between an application's workers and mall-run's hub, over
//! one TCP connection per worker: a header line `VERB key=value ...`, then,
//! when the header has `len=N`, N bytes of payload (a worker's data, a
//! message to another rank, numbers to reduce).
//!
//! Both ends read and write frames here. Reading is strict, as the hub
//! reads what any process on the network sends before it has shown the
//! job's token: a header is at most [`MAX_HEADER`] bytes of `key=value`
//! words, a payload at most [`MAX_PAYLOAD`].

use std::io::{self, BufRead, Read, Write};

/// Longest header line, in bytes.
pub const MAX_HEADER: usize = 16 * 1024;

/// Largest payload of one frame: 1 GiB, so that a wrong length read from a
/// stray connection cannot make the hub allocate without bound.
pub const MAX_PAYLOAD: u64 = 1 << 30;

/// One frame: its verb, its fields in order, its payload.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Frame {
    pub verb: String,
    pub fields: Vec<(String, String)>,
    pub payload: Vec<u8>,
}

impl Frame {
    pub fn new(verb: &str) -> Frame {
        Frame { verb: verb.to_string(), ..Frame::default() }
    }

    /// Add a field. Values never hold spaces or line breaks (names, numbers).
    pub fn with(mut self, key: &str, value: impl std::fmt::Display) -> Frame {
        self.fields.push((key.to_string(), value.to_string()));
        self
    }

    pub fn with_payload(mut self, payload: Vec<u8>) -> Frame {
        self.payload = payload;
        self
    }

    /// A field's text, or an error naming the frame and the key.
    pub fn get(&self, key: &str) -> Result<&str, String> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| format!("{}: {key}= is missing", self.verb))
    }

    /// A field read as a number (or any `FromStr`).
    pub fn number<T: std::str::FromStr>(&self, key: &str) -> Result<T, String> {
        let v = self.get(key)?;
        v.parse().map_err(|_| format!("{}: {key}={v} is not valid: expected a whole number", self.verb))
    }

    /// A field holding a comma-separated list (empty for none).
    pub fn list(&self, key: &str) -> Result<Vec<String>, String> {
        let v = self.get(key)?;
        Ok(if v.is_empty() { Vec::new() } else { v.split(',').map(str::to_string).collect() })
    }

    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let mut head = self.verb.clone();
        for (k, v) in &self.fields {
            head.push(' ');
            head.push_str(k);
            head.push('=');
            head.push_str(v);
        }
        if !self.payload.is_empty() {
            head.push_str(&format!(" len={}", self.payload.len()));
        }
        head.push('\n');
        w.write_all(head.as_bytes())?;
        w.write_all(&self.payload)?;
        w.flush()
    }

    /// The next frame, or `None` at a clean end of the stream.
    pub fn read_from<R: BufRead>(r: &mut R) -> io::Result<Option<Frame>> {
        let mut head = Vec::new();
        let n = <&mut R as Read>::take(r, MAX_HEADER as u64 + 1).read_until(b'\n', &mut head)?;
        if n == 0 {
            return Ok(None);
        }
        if head.last() != Some(&b'\n') {
            return Err(bad(if head.len() > MAX_HEADER {
                format!("a header longer than the {MAX_HEADER} bytes allowed")
            } else {
                "the stream ended inside a header".to_string()
            }));
        }
        head.pop();
        let head = String::from_utf8(head).map_err(|_| bad("a header that is not UTF-8".into()))?;
        let mut words = head.split(' ');
        let verb = words.next().filter(|v| !v.is_empty()).ok_or_else(|| bad("an empty header".into()))?;
        if !verb.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            return Err(bad(format!("'{verb}' is not a verb")));
        }
        let mut frame = Frame::new(verb);
        let mut len = 0u64;
        for word in words {
            let (k, v) = word.split_once('=').ok_or_else(|| bad(format!("{verb}: '{word}' is not key=value")))?;
            if k == "len" {
                len = v.parse().map_err(|_| bad(format!("{verb}: len={v} is not a length")))?;
            } else if frame.fields.iter().any(|(seen, _)| seen == k) {
                return Err(bad(format!("{verb}: {k} given twice")));
            } else {
                frame.fields.push((k.to_string(), v.to_string()));
            }
        }
        if len > MAX_PAYLOAD {
            return Err(bad(format!("{verb}: a payload of {len} bytes, more than the {MAX_PAYLOAD} allowed")));
        }
        frame.payload = vec![0; len as usize];
        r.read_exact(&mut frame.payload)?;
        Ok(Some(frame))
    }
}

fn bad(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, why)
}

/// f64s as a payload (little-endian), and back.
pub fn f64s_to_bytes(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn bytes_to_f64s(b: &[u8]) -> Result<Vec<f64>, String> {
    if !b.len().is_multiple_of(8) {
        return Err(format!("{} bytes are not a whole number of f64s", b.len()));
    }
    Ok(b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(f: &Frame) -> Frame {
        let mut buf = Vec::new();
        f.write_to(&mut buf).unwrap();
        Frame::read_from(&mut &buf[..]).unwrap().unwrap()
    }

    #[test]
    fn frames_with_and_without_payload_read_back() {
        let f = Frame::new("PROBE");
        assert_eq!(round_trip(&f), f);
        let f = Frame::new("SEND").with("to", 3).with_payload(vec![0, 1, 2, 255, b'\n']);
        assert_eq!(round_trip(&f), f);
        assert_eq!(f.number::<usize>("to"), Ok(3));
        assert_eq!(f.get("from").unwrap_err(), "SEND: from= is missing");
        // Two frames on one stream.
        let mut buf = Vec::new();
        Frame::new("A").with_payload(b"xy".to_vec()).write_to(&mut buf).unwrap();
        Frame::new("B").with("nodes", "").write_to(&mut buf).unwrap();
        let mut r = &buf[..];
        assert_eq!(Frame::read_from(&mut r).unwrap().unwrap().payload, b"xy");
        assert_eq!(Frame::read_from(&mut r).unwrap().unwrap().list("nodes"), Ok(vec![]));
        assert_eq!(Frame::read_from(&mut r).unwrap(), None);
    }

    #[test]
    fn what_a_stray_client_sends_is_refused_saying_why() {
        let err = |bytes: &[u8]| Frame::read_from(&mut &bytes[..]).unwrap_err().to_string();
        assert_eq!(err(b"GET / HTTP/1.1\n"), "GET: '/' is not key=value");
        assert_eq!(err(b"hello\n"), "'hello' is not a verb");
        assert_eq!(err(b"A x=1 x=2\n"), "A: x given twice");
        assert_eq!(err(b"A len=99999999999\n"), "A: a payload of 99999999999 bytes, more than the 1073741824 allowed");
        assert_eq!(err(b"A"), "the stream ended inside a header");
        assert!(err(&vec![b'A'; MAX_HEADER + 10]).starts_with("a header longer than"));
        // A payload shorter than announced.
        assert!(Frame::read_from(&mut &b"A len=5\nab"[..]).is_err());
    }

    #[test]
    fn f64s_travel_exactly() {
        let v = [0.0, -1.5, f64::MAX, 1e-300];
        assert_eq!(bytes_to_f64s(&f64s_to_bytes(&v)).unwrap(), v);
        assert!(bytes_to_f64s(&[0; 9]).is_err());
    }
}
