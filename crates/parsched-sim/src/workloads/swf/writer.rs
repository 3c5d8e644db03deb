//! SWF output: [`SwfWriter`] writes a header and records in the archive's
//! layout.

use super::{SwfHeader, SwfRecord};
use std::io::{self, Write};

/// Writes an SWF trace: the header comments, then one line per record.
pub struct SwfWriter<W: Write> {
    out: W,
}

impl<W: Write> SwfWriter<W> {
    pub fn new(mut out: W, header: &SwfHeader) -> io::Result<SwfWriter<W>> {
        out.write_all(header.to_comments().as_bytes())?;
        Ok(SwfWriter { out })
    }

    pub fn write(&mut self, r: &SwfRecord) -> io::Result<()> {
        writeln!(self.out, "{r}")
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}
