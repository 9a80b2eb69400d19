//! The one error type of body decoding.
//!
//! Header errors are `rmq_wire::HeaderError` (they name the missing field);
//! everything that can go wrong while reading a *body* is a [`BodyError`]. The
//! NameServer answers any of them with `SYSTEM_ERROR` and the error text as
//! remark, which is what Java does with its decode exceptions.

/// A request or response body that could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The JSON text is malformed or has a value of the wrong shape.
    #[error("Failed to decode JSON body: {0}")]
    Json(#[from] serde_json::Error),
    /// The zlib stream is corrupt.
    #[error("Failed to inflate compressed body: {0}")]
    Inflate(std::io::Error),
    /// The inflated data ended before a declared section did (Java:
    /// "End of compressed data has reached").
    #[error("End of compressed data has reached while reading {what}")]
    Truncated {
        /// The section being read.
        what: &'static str,
    },
    /// A length prefix in the compressed layout is negative.
    #[error("negative length {len} for {what} in compressed body")]
    NegativeLength {
        /// The section whose length is negative.
        what: &'static str,
        /// The length read.
        len: i32,
    },
    /// The inflated data would exceed the decoder's bound (decompression bomb
    /// guard).
    #[error("compressed body inflates beyond the limit of {limit} bytes")]
    TooLarge {
        /// The bound, in inflated bytes.
        limit: usize,
    },
    /// A section of the compressed layout is not valid UTF-8.
    #[error("{what} in compressed body is not valid UTF-8")]
    Utf8 {
        /// The section.
        what: &'static str,
    },
    /// A TopicConfig text entry (`name r w perm FILTER {attrs}`) is malformed.
    #[error("malformed topic config entry {text:?}: {reason}")]
    TopicConfigText {
        /// The entry as sent.
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A `.properties` text has a malformed `\uXXXX` escape, the only error
    /// `java.util.Properties.load` reports.
    #[error("Malformed \\uxxxx encoding in properties line {line}")]
    Properties {
        /// The 1-based logical line number.
        line: usize,
    },
}
