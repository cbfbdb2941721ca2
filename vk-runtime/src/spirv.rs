//! Checks on SPIR-V modules before they reach a driver: the external validator (`spirv-val`)
//! and a cheap structural check that always runs.

use crate::{Result, VkError};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: u32 = 0x0723_0203;
const OP_ENTRY_POINT: u32 = 15;
const EXECUTION_MODEL_GLCOMPUTE: u32 = 5;

/// Validates a SPIR-V module for vulkan1.2 (calls `spirv-val --target-env vulkan1.2`, from the
/// Debian package spirv-tools; error if it is missing). Used by `Context::kernel` and by tests.
pub fn validate_spirv(words: &[u32]) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "vkad-spirv-{}-{}.spv",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let write = std::fs::File::create(&path).and_then(|mut f| f.write_all(&bytes));
    if let Err(e) = write {
        let _ = std::fs::remove_file(&path);
        return Err(VkError::Vk(format!(
            "cannot write {} for spirv-val: {e}",
            path.display()
        )));
    }
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .stdin(Stdio::null())
        .output();
    let _ = std::fs::remove_file(&path);
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(VkError::Vk(
                "spirv-val not found: install SPIRV-Tools (on Debian/Ubuntu: \
                 `apt install spirv-tools`) or turn module validation off \
                 (VKAD_VALIDATE_SPIRV=0)"
                    .into(),
            ))
        }
        Err(e) => return Err(VkError::Vk(format!("cannot run spirv-val: {e}"))),
    };
    if out.status.success() {
        return Ok(());
    }
    let mut msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !stdout.trim().is_empty() {
        if !msg.is_empty() {
            msg.push('\n');
        }
        msg.push_str(stdout.trim());
    }
    Err(VkError::Vk(format!(
        "invalid SPIR-V module (spirv-val): {msg}"
    )))
}

/// The structural check that runs even without `spirv-val`: the module starts with the SPIR-V
/// header, its instruction stream is well formed, and it has a `GLCompute` entry point named
/// `entry`. Drivers are not required to survive modules that fail this.
pub(crate) fn check_module(words: &[u32], entry: &str) -> Result<()> {
    let bad = |why: &str| Err(VkError::Vk(format!("invalid SPIR-V module: {why}")));
    if words.len() < 5 {
        return bad("shorter than the 5-word header");
    }
    if words[0] != MAGIC {
        return bad(&format!(
            "bad magic number {:#010x} (expected {MAGIC:#010x})",
            words[0]
        ));
    }
    let mut i = 5;
    let mut entries = Vec::new();
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return bad(&format!("malformed instruction at word {i}"));
        }
        if opcode == OP_ENTRY_POINT && count >= 4 {
            let model = words[i + 1];
            let name = literal_string(&words[i + 3..i + count]);
            if model == EXECUTION_MODEL_GLCOMPUTE {
                if name == entry {
                    return Ok(());
                }
                entries.push(name);
            }
        }
        i += count;
    }
    if entries.is_empty() {
        bad(&format!("no GLCompute entry point (looked for `{entry}`)"))
    } else {
        bad(&format!(
            "no GLCompute entry point `{entry}` (it has: {})",
            entries.join(", ")
        ))
    }
}

/// Decodes a nul-terminated SPIR-V literal string (UTF-8, little-endian words).
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_words(s: &str) -> Vec<u32> {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        while b.len() & 3 != 0 {
            b.push(0);
        }
        b.chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn module_with_entry(name: &str) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0300, 0, 10, 0];
        let n = name_words(name);
        w.push(((3 + n.len() as u32) << 16) | OP_ENTRY_POINT);
        w.push(EXECUTION_MODEL_GLCOMPUTE);
        w.push(1);
        w.extend(n);
        w
    }

    #[test]
    fn finds_entry_points() {
        assert!(check_module(&module_with_entry("main"), "main").is_ok());
        let e = check_module(&module_with_entry("main"), "other").unwrap_err();
        assert!(e.to_string().contains("it has: main"), "{e}");
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        assert!(check_module(&[], "main").is_err());
        assert!(check_module(&[1, 2, 3, 4, 5, 6], "main").is_err());
        let mut m = module_with_entry("main");
        m[5] = (200 << 16) | OP_ENTRY_POINT; // word count past the end
        assert!(check_module(&m, "main").is_err());
        m[5] = 0; // zero word count
        assert!(check_module(&m, "main").is_err());
    }

    #[test]
    fn spirv_val_rejects_a_truncated_module() {
        let e = validate_spirv(&module_with_entry("main")).unwrap_err();
        assert!(e.to_string().contains("SPIR-V"), "{e}");
    }
}
