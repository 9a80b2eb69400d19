//! The byte steps both JSON header readers take: the plain fast path
//! (`json_plain`, strict, as serde_json reads) and the oversized-header peek
//! (`peek`, lenient, as fastjson reads). Each reader wraps a [`Cursor`] and
//! adds the value rules of its own.

/// A position in a header's bytes; the steps answer `None` (or `false`)
/// where the expected byte is not there.
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor { bytes, pos: 0 }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.peek_at(self.pos)
    }

    pub(super) fn peek_at(&self, pos: usize) -> Option<u8> {
        self.bytes.get(pos).copied()
    }

    /// JSON's four whitespace characters, as serde_json skips them.
    pub(super) fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    pub(super) fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    pub(super) fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }
}
