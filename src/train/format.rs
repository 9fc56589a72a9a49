//! The files a training data set is made of, in each format's real layout, so that any reader
//! of the format (Python's zipfile and numpy, TensorFlow's record reader) takes them:
//!
//! - npz: an uncompressed (stored) ZIP archive holding two .npy arrays, `x.npy` (the samples,
//!   unsigned bytes, one row per sample) and `y.npy` (a label byte per sample);
//! - tfrecord: records framed as an 8-byte little-endian length, its masked CRC32C, the data,
//!   and the data's masked CRC32C;
//! - jpeg: one sample per file, starting and ending with JPEG's SOI and EOI markers.
//!
//! Payload bytes are pseudo-random (nothing for compression or deduplication to gain).

use std::io;
use std::os::unix::fs::FileExt;

/// A data set's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// NumPy's zipped arrays, read whole per sample.
    Npz,
    /// TensorFlow's length- and CRC-framed records, read sequentially in buffers.
    Tfrecord,
    /// One image-sized file per sample, read whole.
    Jpeg,
}

impl Format {
    /// The file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Npz => "npz",
            Format::Tfrecord => "tfrecord",
            Format::Jpeg => "jpg",
        }
    }

    /// The format's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Npz => "npz",
            Format::Tfrecord => "tfrecord",
            Format::Jpeg => "jpeg",
        }
    }
}

const fn table(poly: u32) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ poly } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

/// ZIP's CRC-32 (the IEEE polynomial, reflected).
static CRC32: [u32; 256] = table(0xEDB8_8320);
/// CRC-32C (Castagnoli, reflected), as TFRecord frames use.
static CRC32C: [u32; 256] = table(0x82F6_3B78);

/// A running CRC over either polynomial.
#[derive(Clone, Copy)]
pub struct Crc {
    table: &'static [u32; 256],
    state: u32,
}

impl Crc {
    /// ZIP's CRC-32.
    pub fn ieee() -> Crc {
        Crc { table: &CRC32, state: !0 }
    }

    /// CRC-32C.
    pub fn castagnoli() -> Crc {
        Crc { table: &CRC32C, state: !0 }
    }

    /// Adds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        let mut c = self.state;
        for &b in bytes {
            c = self.table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
        }
        self.state = c;
    }

    /// The CRC of the bytes added.
    pub fn value(self) -> u32 {
        !self.state
    }
}

/// TFRecord's masking of a CRC32C (so that a CRC of data holding CRCs stays well spread).
pub fn masked(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

fn crc32c(bytes: &[u8]) -> u32 {
    let mut c = Crc::castagnoli();
    c.update(bytes);
    c.value()
}

/// A .npy header for a C-ordered array of unsigned bytes of `shape`, padded so that the data
/// starts on a 64-byte boundary as numpy writes it.
pub fn npy_header(shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
        [one] => format!("({one},)"),
        more => format!("({})", more.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': {dims}, }}");
    // magic (6) + version (2) + length (2) + dict + newline, to a multiple of 64.
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

/// Bytes of payload generated at a time.
const CHUNK: usize = 1 << 20;

/// Writes `len` pseudo-random bytes from `seed` at `offset`, feeding `crc`; gives the bytes
/// written.
fn payload(file: &std::fs::File, offset: u64, len: u64, seed: u64, crc: &mut Crc) -> io::Result<u64> {
    let mut buf = vec![0u8; CHUNK.min(len as usize).max(1)];
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        crate::engine::data::fill_random(&mut buf[..n], crate::engine::offsets::mix(seed, done));
        crc.update(&buf[..n]);
        file.write_all_at(&buf[..n], offset + done)?;
        done += n as u64;
    }
    Ok(len)
}

/// The largest npz file the stored ZIP layout here can hold (no ZIP64).
pub const NPZ_LIMIT: u64 = u32::MAX as u64 - 4096;

/// Writes an npz file of `samples` rows of `sample_bytes` each; gives its size.
pub fn write_npz(file: &std::fs::File, samples: u64, sample_bytes: u64, seed: u64) -> io::Result<u64> {
    let arrays: [(&str, Vec<u8>, u64); 2] = [
        ("x.npy", npy_header(&[samples, sample_bytes]), samples * sample_bytes),
        ("y.npy", npy_header(&[samples]), samples),
    ];
    let mut at = 0u64;
    let mut central = Vec::new();
    for (k, (name, header, data_len)) in arrays.iter().enumerate() {
        let size = header.len() as u64 + data_len;
        if at + size > NPZ_LIMIT {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "an npz file of 4 GiB or more needs ZIP64"));
        }
        let local = zip_header(LOCAL, name, 0, size as u32, None);
        file.write_all_at(&local, at)?;
        let data_at = at + local.len() as u64;
        let mut crc = Crc::ieee();
        crc.update(header);
        file.write_all_at(header, data_at)?;
        payload(file, data_at + header.len() as u64, *data_len, crate::engine::offsets::mix(seed, k as u64), &mut crc)?;
        // The CRC is known once the data is written: set it in the local header.
        file.write_all_at(&crc.value().to_le_bytes(), at + 14)?;
        central.extend(zip_header(CENTRAL, name, crc.value(), size as u32, Some(at as u32)));
        at = data_at + size;
    }
    let mut end = Vec::with_capacity(22);
    end.extend(0x0605_4b50u32.to_le_bytes());
    end.extend([0u8; 4]); // this disk, the central directory's disk
    end.extend(2u16.to_le_bytes());
    end.extend(2u16.to_le_bytes());
    end.extend((central.len() as u32).to_le_bytes());
    end.extend((at as u32).to_le_bytes());
    end.extend(0u16.to_le_bytes());
    central.extend(end);
    file.write_all_at(&central, at)?;
    Ok(at + central.len() as u64)
}

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;

/// A ZIP local header (no `offset`) or central directory entry (at `offset`) for a stored
/// entry.
fn zip_header(signature: u32, name: &str, crc: u32, size: u32, offset: Option<u32>) -> Vec<u8> {
    let mut h = Vec::with_capacity(46 + name.len());
    h.extend(signature.to_le_bytes());
    if offset.is_some() {
        h.extend(20u16.to_le_bytes()); // made by: 2.0
    }
    h.extend(20u16.to_le_bytes()); // needed: 2.0
    h.extend(0u16.to_le_bytes()); // flags
    h.extend(0u16.to_le_bytes()); // stored
    h.extend(0u16.to_le_bytes()); // time
    h.extend(0x21u16.to_le_bytes()); // date: 1980-01-01
    h.extend(crc.to_le_bytes());
    h.extend(size.to_le_bytes());
    h.extend(size.to_le_bytes());
    h.extend((name.len() as u16).to_le_bytes());
    h.extend(0u16.to_le_bytes()); // extra
    if let Some(offset) = offset {
        h.extend(0u16.to_le_bytes()); // comment
        h.extend(0u16.to_le_bytes()); // disk
        h.extend(0u16.to_le_bytes()); // internal attributes
        h.extend(0u32.to_le_bytes()); // external attributes
        h.extend(offset.to_le_bytes());
    }
    h.extend(name.as_bytes());
    h
}

/// The bytes a TFRecord frame adds to its data.
pub const FRAME: u64 = 16;

/// Writes TFRecord records of these data sizes, one after another; gives the file's size.
pub fn write_tfrecord(file: &std::fs::File, sizes: &[u64], seed: u64) -> io::Result<u64> {
    let mut at = 0u64;
    for (k, &len) in sizes.iter().enumerate() {
        let length = len.to_le_bytes();
        let mut head = Vec::with_capacity(12);
        head.extend(length);
        head.extend(masked(crc32c(&length)).to_le_bytes());
        file.write_all_at(&head, at)?;
        let mut crc = Crc::castagnoli();
        payload(file, at + 12, len, crate::engine::offsets::mix(seed, k as u64), &mut crc)?;
        file.write_all_at(&masked(crc.value()).to_le_bytes(), at + 12 + len)?;
        at += len + FRAME;
    }
    Ok(at)
}

/// Writes an image-sized file of `len` bytes (at least 4: its markers).
pub fn write_jpeg(file: &std::fs::File, len: u64, seed: u64) -> io::Result<u64> {
    let len = len.max(4);
    let mut crc = Crc::ieee();
    file.write_all_at(&[0xFF, 0xD8], 0)?;
    payload(file, 2, len - 4, seed, &mut crc)?;
    file.write_all_at(&[0xFF, 0xD9], len - 2)?;
    Ok(len)
}

/// The size of a file holding these samples in `format`.
pub fn file_size(format: Format, sample_sizes: &[u64]) -> u64 {
    match format {
        Format::Npz => {
            let n = sample_sizes.len() as u64;
            let row = sample_sizes.first().copied().unwrap_or(0);
            let x = npy_header(&[n, row]).len() as u64 + n * row;
            let y = npy_header(&[n]).len() as u64 + n;
            (30 + 5) * 2 + x + y + (46 + 5) * 2 + 22
        }
        Format::Tfrecord => sample_sizes.iter().map(|s| s + FRAME).sum(),
        Format::Jpeg => sample_sizes.iter().map(|s| (*s).max(4)).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_the_standard_check_value() {
        // The check value of "123456789" for CRC-32C and for CRC-32.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        let mut c = Crc::ieee();
        c.update(b"123456789");
        assert_eq!(c.value(), 0xCBF4_3926);
    }

    #[test]
    fn npy_header_aligns_the_data_to_64_bytes() {
        for shape in [&[1u64][..], &[7, 146_600_628], &[1251]] {
            let h = npy_header(shape);
            assert_eq!(h.len() % 64, 0, "{shape:?}");
            assert_eq!(*h.last().unwrap(), b'\n');
        }
    }

    #[test]
    fn the_predicted_size_is_the_written_size() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("a")).unwrap();
        assert_eq!(write_npz(&f, 3, 1000, 1).unwrap(), file_size(Format::Npz, &[1000; 3]));
        assert_eq!(std::fs::metadata(dir.path().join("a")).unwrap().len(), file_size(Format::Npz, &[1000; 3]));
        let g = std::fs::File::create(dir.path().join("b")).unwrap();
        assert_eq!(write_tfrecord(&g, &[10, 20], 1).unwrap(), file_size(Format::Tfrecord, &[10, 20]));
    }
}
