//! The persistent pipeline cache: where its file lives, the file format, and reading and
//! writing it. Plain Rust, no Vulkan calls (those are in `context.rs`).
//!
//! # File
//! One file per device and driver, named
//! `<vendorID>-<deviceID>-<driverVersion>-<pipelineCacheUUID>.bin` (hexadecimal) under the
//! directory [`PipelineCacheMode`] picks, so different devices and drivers never share one.
//! Contents, little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 0..8 | magic `VKADPC` 0 1 (format version 1) |
//! | 8..12, 12..16, 16..20 | vendorID, deviceID, driverVersion |
//! | 20..36 | pipelineCacheUUID |
//! | 36..44 | payload length in bytes |
//! | 44..52 | FNV-1a (64-bit) of the payload |
//! | 52.. | the payload: what `vkGetPipelineCacheData` returned |
//!
//! A file is used only when all of that matches this device and the payload starts with a
//! Vulkan pipeline cache header (`VkPipelineCacheHeaderVersionOne`) of the same vendor, device
//! and UUID; otherwise it is ignored (and replaced at the next save), with the reason in
//! [`PipelineCacheStatus::rejected`]. Files are replaced atomically (written to a temporary
//! file in the same directory, then renamed), so concurrent processes see either the old or
//! the new file; the last writer wins.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where a [`crate::Context`] keeps its Vulkan pipeline cache between processes
/// ([`crate::ContextOptions::pipeline_cache`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PipelineCacheMode {
    /// The user's cache directory: `$XDG_CACHE_HOME/vkad/pipelines`, else
    /// `$HOME/.cache/vkad/pipelines` (none when neither is set: no cache). The environment
    /// variable `VKAD_PIPELINE_CACHE` overrides this mode (and only this one): `0` (or
    /// `off`, `false`, `no`) turns the cache off, any other value except `1` (`on`, `true`,
    /// `yes`) and the empty string is the directory to use.
    #[default]
    UserDir,
    /// No cache on disk: nothing is read or written.
    Off,
    /// The cache files live in this directory (created when first written).
    Dir(PathBuf),
}

/// Why an existing cache file was not used. It is replaced at the next save.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheRejection {
    /// The file exists but could not be read.
    Unreadable(std::io::ErrorKind),
    /// The file is larger than vkad ever writes ([`MAX_FILE_BYTES`]).
    TooLarge,
    /// Shorter than its header, or shorter than the payload length it records.
    Truncated,
    /// Not a vkad pipeline cache file (or another version of the format).
    BadMagic,
    /// Written for another vendor, device, driver version or pipeline cache UUID.
    OtherDevice,
    /// The payload does not match its checksum.
    Checksum,
    /// The payload is not a Vulkan pipeline cache of this device (its
    /// `VkPipelineCacheHeaderVersionOne` is missing, malformed or names another device).
    VulkanHeader,
    /// The driver refused the data (`vkCreatePipelineCache` failed with it; an empty cache
    /// was made instead).
    Driver,
}

/// What a context's persistent pipeline cache did ([`crate::Context::pipeline_cache`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipelineCacheStatus {
    /// The cache file; `None` when the cache is off (by option, by `VKAD_PIPELINE_CACHE`, on
    /// a [`crate::Context::from_raw`] context not asked for one, or when no directory is
    /// known), or when the driver could not make a pipeline cache at all.
    pub file: Option<PathBuf>,
    /// Bytes of Vulkan pipeline cache data loaded from the file and given to the driver (0:
    /// none, e.g. no file yet or a rejected one).
    pub loaded_bytes: usize,
    /// Why the existing file was ignored, if it was.
    pub rejected: Option<CacheRejection>,
}

/// vkad never reads a cache file larger than this (a corrupt or foreign file).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

const MAGIC: [u8; 8] = *b"VKADPC\x00\x01";
/// The size of vkad's header in front of the Vulkan data.
pub(crate) const HEADER_BYTES: usize = 52;
/// `sizeof(VkPipelineCacheHeaderVersionOne)`.
const VK_HEADER_BYTES: usize = 32;

/// What identifies a device and driver for the cache: its file name and header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CacheId {
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver_version: u32,
    pub uuid: [u8; 16],
}

impl CacheId {
    /// The cache file's name for this device and driver.
    pub fn file_name(&self) -> String {
        let uuid: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{:08x}-{:08x}-{:08x}-{uuid}.bin",
            self.vendor_id, self.device_id, self.driver_version
        )
    }
}

/// The directory `mode` names, given the values of `VKAD_PIPELINE_CACHE`, `XDG_CACHE_HOME`
/// and `HOME` (`None`: off, or no directory is known).
pub(crate) fn resolve_dir(
    mode: &PipelineCacheMode,
    env_cache: Option<OsString>,
    xdg_cache_home: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    match mode {
        PipelineCacheMode::Off => None,
        PipelineCacheMode::Dir(d) => Some(d.clone()),
        PipelineCacheMode::UserDir => {
            if let Some(v) = env_cache.filter(|v| !v.is_empty()) {
                match v.to_str().map(|s| s.trim().to_ascii_lowercase()).as_deref() {
                    Some("0" | "off" | "false" | "no") => return None,
                    Some("1" | "on" | "true" | "yes") => {}
                    _ => return Some(PathBuf::from(v)),
                }
            }
            // The XDG base directory specification: relative paths are to be ignored.
            let absolute = |v: &OsString| !v.is_empty() && Path::new(v).is_absolute();
            if let Some(x) = xdg_cache_home.filter(absolute) {
                return Some(PathBuf::from(x).join("vkad").join("pipelines"));
            }
            home.filter(absolute).map(|h| {
                PathBuf::from(h)
                    .join(".cache")
                    .join("vkad")
                    .join("pipelines")
            })
        }
    }
}

/// [`resolve_dir`] with this process's environment.
pub(crate) fn dir_from_env(mode: &PipelineCacheMode) -> Option<PathBuf> {
    resolve_dir(
        mode,
        std::env::var_os("VKAD_PIPELINE_CACHE"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// FNV-1a, 64 bits: a fixed checksum (std's hashers may change between Rust versions).
pub(crate) fn fnv1a64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The file's bytes for `payload` (the Vulkan data) on the device `id`.
pub(crate) fn encode(id: &CacheId, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&id.vendor_id.to_le_bytes());
    out.extend_from_slice(&id.device_id.to_le_bytes());
    out.extend_from_slice(&id.driver_version.to_le_bytes());
    out.extend_from_slice(&id.uuid);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a64(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// The Vulkan data in a cache file's bytes, if the file is whole and is for the device `id`.
pub(crate) fn decode<'a>(id: &CacheId, file: &'a [u8]) -> Result<&'a [u8], CacheRejection> {
    if file.len() < MAGIC.len() {
        return Err(CacheRejection::Truncated);
    }
    if file[..MAGIC.len()] != MAGIC {
        return Err(CacheRejection::BadMagic);
    }
    if file.len() < HEADER_BYTES {
        return Err(CacheRejection::Truncated);
    }
    let written_for = CacheId {
        vendor_id: u32_at(file, 8),
        device_id: u32_at(file, 12),
        driver_version: u32_at(file, 16),
        uuid: file[20..36].try_into().expect("16 bytes"),
    };
    if written_for != *id {
        return Err(CacheRejection::OtherDevice);
    }
    let len = u64_at(file, 36);
    let payload = &file[HEADER_BYTES..];
    if (payload.len() as u64) < len {
        return Err(CacheRejection::Truncated);
    }
    // Trailing bytes after the recorded length: not a file vkad wrote.
    if payload.len() as u64 != len {
        return Err(CacheRejection::Checksum);
    }
    if fnv1a64(payload) != u64_at(file, 44) {
        return Err(CacheRejection::Checksum);
    }
    check_vulkan_header(id, payload)?;
    Ok(payload)
}

/// Checks the `VkPipelineCacheHeaderVersionOne` at the start of `data` (always
/// little-endian): its size (at least 32, within the data), version 1, and this device's
/// vendor, device and UUID.
fn check_vulkan_header(id: &CacheId, data: &[u8]) -> Result<(), CacheRejection> {
    if data.len() < VK_HEADER_BYTES {
        return Err(CacheRejection::VulkanHeader);
    }
    let header_size = u32_at(data, 0) as usize;
    let version = u32_at(data, 4);
    let ok = header_size >= VK_HEADER_BYTES
        && header_size <= data.len()
        && version == 1 // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
        && u32_at(data, 8) == id.vendor_id
        && u32_at(data, 12) == id.device_id
        && data[16..32] == id.uuid;
    if ok {
        Ok(())
    } else {
        Err(CacheRejection::VulkanHeader)
    }
}

/// Reads the cache file at `path`: `Ok(None)` when there is none, the Vulkan data when it is
/// usable, the reason otherwise.
pub(crate) fn load(id: &CacheId, path: &Path) -> Result<Option<Vec<u8>>, CacheRejection> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CacheRejection::Unreadable(e.kind())),
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(CacheRejection::TooLarge);
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CacheRejection::Unreadable(e.kind())),
    };
    decode(id, &bytes).map(|p| Some(p.to_vec()))
}

/// Replaces the file at `path` with `bytes` atomically: writes a temporary file in the same
/// directory (created if missing), then renames it over `path`. The temporary file is removed
/// on failure.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> CacheId {
        CacheId {
            vendor_id: 0x10005,
            device_id: 0,
            driver_version: 0x0580_6006,
            uuid: *b"0123456789abcdef",
        }
    }

    /// A Vulkan cache blob for `id`: the 32-byte header and some data.
    fn vk_data(id: &CacheId, extra: &[u8]) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&32u32.to_le_bytes());
        d.extend_from_slice(&1u32.to_le_bytes());
        d.extend_from_slice(&id.vendor_id.to_le_bytes());
        d.extend_from_slice(&id.device_id.to_le_bytes());
        d.extend_from_slice(&id.uuid);
        d.extend_from_slice(extra);
        d
    }

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn directories() {
        let user = PipelineCacheMode::UserDir;
        assert_eq!(
            resolve_dir(&user, None, os("/x/cache"), os("/home/u")),
            Some(PathBuf::from("/x/cache/vkad/pipelines"))
        );
        assert_eq!(
            resolve_dir(&user, None, None, os("/home/u")),
            Some(PathBuf::from("/home/u/.cache/vkad/pipelines"))
        );
        // Empty or relative XDG_CACHE_HOME is ignored.
        for xdg in ["", "rel/cache"] {
            assert_eq!(
                resolve_dir(&user, None, os(xdg), os("/home/u")),
                Some(PathBuf::from("/home/u/.cache/vkad/pipelines"))
            );
        }
        assert_eq!(resolve_dir(&user, None, None, None), None);
        assert_eq!(resolve_dir(&user, None, None, os("")), None);
        // VKAD_PIPELINE_CACHE: off, on (the default place), a directory, empty (unset).
        for off in ["0", "off", "FALSE", "no"] {
            assert_eq!(resolve_dir(&user, os(off), None, os("/home/u")), None);
        }
        for on in ["1", "on", "true", "yes", ""] {
            assert_eq!(
                resolve_dir(&user, os(on), None, os("/home/u")),
                Some(PathBuf::from("/home/u/.cache/vkad/pipelines"))
            );
        }
        assert_eq!(
            resolve_dir(&user, os("/tmp/pc"), os("/x"), os("/home/u")),
            Some(PathBuf::from("/tmp/pc"))
        );
        // Explicit modes ignore the environment.
        assert_eq!(
            resolve_dir(&PipelineCacheMode::Off, os("/tmp/pc"), None, os("/h")),
            None
        );
        let dir = PipelineCacheMode::Dir(PathBuf::from("/d"));
        assert_eq!(
            resolve_dir(&dir, os("0"), None, os("/h")),
            Some(PathBuf::from("/d"))
        );
    }

    #[test]
    fn file_names_name_the_device_and_driver() {
        let a = id();
        assert_eq!(
            a.file_name(),
            "00010005-00000000-05806006-30313233343536373839616263646566.bin"
        );
        let mut b = a;
        b.driver_version += 1;
        assert_ne!(a.file_name(), b.file_name());
        let mut c = a;
        c.uuid[15] ^= 1;
        assert_ne!(a.file_name(), c.file_name());
    }

    #[test]
    fn round_trip_and_rejections() {
        let id = id();
        let data = vk_data(&id, b"pipelines");
        let file = encode(&id, &data);
        assert_eq!(file.len(), HEADER_BYTES + data.len());
        assert_eq!(decode(&id, &file), Ok(&data[..]));

        // Truncated anywhere: in the magic, in the header, in the payload.
        for n in [0, 5, 8, 30, HEADER_BYTES, file.len() - 1] {
            assert_eq!(
                decode(&id, &file[..n]),
                Err(CacheRejection::Truncated),
                "{n}"
            );
        }
        // Trailing garbage.
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(&id, &longer), Err(CacheRejection::Checksum));
        // Random bytes.
        let noise: Vec<u8> = (0..200u32).map(|i| (i * 7919 % 251) as u8).collect();
        assert_eq!(decode(&id, &noise), Err(CacheRejection::BadMagic));
        // Another device, driver or UUID.
        let mut other = id;
        other.uuid[0] ^= 0xff;
        assert_eq!(decode(&other, &file), Err(CacheRejection::OtherDevice));
        let mut other = id;
        other.driver_version = 1;
        assert_eq!(decode(&other, &file), Err(CacheRejection::OtherDevice));
        // A flipped payload bit.
        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&id, &flipped), Err(CacheRejection::Checksum));
        // Our header matches but the Vulkan data is of another device (UUID), another vendor,
        // has a bad header size, another header version, or is too short to have a header.
        let mut foreign = id;
        foreign.uuid[3] ^= 0x10;
        let mut bad_size = data.clone();
        bad_size[0..4].copy_from_slice(&1000u32.to_le_bytes());
        let mut bad_version = data.clone();
        bad_version[4] = 2;
        let mut foreign_vendor = data.clone();
        foreign_vendor[8] ^= 1;
        for payload in [
            vk_data(&foreign, b"x"),
            bad_size,
            bad_version,
            foreign_vendor,
            data[..20].to_vec(),
        ] {
            assert_eq!(
                decode(&id, &encode(&id, &payload)),
                Err(CacheRejection::VulkanHeader)
            );
        }
    }

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn atomic_writes_and_loads() {
        let dir = std::env::temp_dir().join(format!(
            "vkad-pcache-unit-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let id = id();
        let path = dir.join("sub").join(id.file_name());
        assert_eq!(load(&id, &path), Ok(None));
        let data = vk_data(&id, b"abc");
        write_atomic(&path, &encode(&id, &data)).unwrap();
        assert_eq!(load(&id, &path), Ok(Some(data.clone())));
        // Replaced, and no temporary file is left behind.
        let data2 = vk_data(&id, b"abcdef");
        write_atomic(&path, &encode(&id, &data2)).unwrap();
        assert_eq!(load(&id, &path), Ok(Some(data2)));
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from(id.file_name())]);
        // A directory in the way of the file: unreadable, and writing fails cleanly.
        let blocked = dir.join("blocked");
        std::fs::create_dir_all(blocked.join(id.file_name())).unwrap();
        assert!(matches!(
            load(&id, &blocked.join(id.file_name())),
            Err(CacheRejection::Unreadable(_))
        ));
        assert!(write_atomic(&blocked.join(id.file_name()), b"x").is_err());
        assert_eq!(std::fs::read_dir(&blocked).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
