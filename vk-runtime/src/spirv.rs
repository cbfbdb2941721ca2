//! Checks on SPIR-V modules before they reach a driver: the external validator (`spirv-val`)
//! and a cheap structural check that always runs.

use crate::{Result, VkError};
use std::io::Write;
use std::process::{Command, Stdio};

const MAGIC: u32 = 0x0723_0203;
const OP_EXTENSION: u32 = 10;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const OP_CAPABILITY: u32 = 17;
/// `ExecutionMode SignedZeroInfNanPreserve` and its capability (SPV_KHR_float_controls).
const MODE_DENORM_PRESERVE: u32 = 4459;
const MODE_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4461;
const CAP_DENORM_PRESERVE: u32 = 4464;
const CAP_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4466;
/// The float-controls capabilities: `DenormPreserve` ..= `RoundingModeRTZ`.
const CAPS_FLOAT_CONTROLS: std::ops::RangeInclusive<u32> = 4464..=4468;
const EXECUTION_MODEL_GLCOMPUTE: u32 = 5;

/// Validates a SPIR-V module for vulkan1.2 (calls `spirv-val --target-env vulkan1.2`, from the
/// Debian package spirv-tools; error if it is missing). Used by `Context::kernel` and by tests.
/// The module goes to `spirv-val` through a pipe: no temporary file is left behind, whatever
/// happens to the process.
pub fn validate_spirv(words: &[u32]) -> Result<()> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let out = Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            // Written from another thread, so that a validator that reports before reading
            // all of its input cannot block on a full output pipe while we block on input.
            let mut stdin = child.stdin.take();
            let writer = std::thread::spawn(move || match stdin.as_mut() {
                Some(w) => w.write_all(&bytes),
                None => Ok(()),
            });
            let out = child.wait_with_output();
            // A validator that stops reading early closes the pipe: its report says why.
            let _ = writer.join();
            out
        });
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

/// The float-controls execution modes (SPV_KHR_float_controls, core in Vulkan 1.2) that vkad's
/// modules declare per float width, each with the device property that allows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatControl {
    /// `DenormPreserve` (`shaderDenormPreserveFloatN`).
    DenormPreserve,
    /// `SignedZeroInfNanPreserve` (`shaderSignedZeroInfNanPreserveFloatN`).
    SignedZeroInfNanPreserve,
}

impl FloatControl {
    const ALL: [FloatControl; 2] = [
        FloatControl::DenormPreserve,
        FloatControl::SignedZeroInfNanPreserve,
    ];
    fn mode(self) -> u32 {
        match self {
            FloatControl::DenormPreserve => MODE_DENORM_PRESERVE,
            FloatControl::SignedZeroInfNanPreserve => MODE_SIGNED_ZERO_INF_NAN_PRESERVE,
        }
    }
    fn capability(self) -> u32 {
        match self {
            FloatControl::DenormPreserve => CAP_DENORM_PRESERVE,
            FloatControl::SignedZeroInfNanPreserve => CAP_SIGNED_ZERO_INF_NAN_PRESERVE,
        }
    }
}

/// `words` without the float-control execution modes ([`FloatControl`]) that `supported`
/// rejects for their float width (a device without `shaderDenormPreserveFloatN` or
/// `shaderSignedZeroInfNanPreserveFloatN` must not be given them); a mode's capability goes too
/// when none of its modes is left, and the `SPV_KHR_float_controls` extension when no
/// float-controls capability is. Borrowed when nothing is dropped; a malformed module comes back
/// unchanged (for [`check_module`] to reject).
pub(crate) fn fit_float_controls(
    words: &[u32],
    supported: impl Fn(FloatControl, u32) -> bool,
) -> std::borrow::Cow<'_, [u32]> {
    use std::borrow::Cow;
    // Instructions as (start, word count, opcode); None when malformed.
    let mut insts = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        if count == 0 || i + count > words.len() {
            return Cow::Borrowed(words);
        }
        insts.push((i, count, words[i] & 0xffff));
        i += count;
    }
    // The float control an instruction declares a mode of, with the width.
    let mode_of = |&(at, count, op): &(usize, usize, u32)| {
        if op != OP_EXECUTION_MODE || count < 4 {
            return None;
        }
        FloatControl::ALL
            .into_iter()
            .find(|c| words[at + 2] == c.mode())
            .map(|c| (c, words[at + 3]))
    };
    let dropped = |inst: &(usize, usize, u32)| mode_of(inst).is_some_and(|(c, w)| !supported(c, w));
    if !insts.iter().any(dropped) {
        return Cow::Borrowed(words);
    }
    let left = |c: FloatControl| {
        insts
            .iter()
            .any(|m| mode_of(m).is_some_and(|(k, _)| k == c) && !dropped(m))
    };
    let cap = |&(at, count, op): &(usize, usize, u32)| {
        (op == OP_CAPABILITY && count == 2).then(|| words[at + 1])
    };
    let drop_cap = |inst: &(usize, usize, u32)| {
        FloatControl::ALL
            .into_iter()
            .any(|c| cap(inst) == Some(c.capability()) && !left(c))
    };
    let caps_left = insts
        .iter()
        .any(|c| cap(c).is_some_and(|c| CAPS_FLOAT_CONTROLS.contains(&c)) && !drop_cap(c));
    let mut out = words[..5].to_vec();
    for inst in &insts {
        let (at, count, op) = *inst;
        let ext = op == OP_EXTENSION
            && literal_string(&words[at + 1..at + count]) == "SPV_KHR_float_controls";
        if dropped(inst) || drop_cap(inst) || (ext && !caps_left) {
            continue;
        }
        out.extend_from_slice(&words[at..at + count]);
    }
    Cow::Owned(out)
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

    /// A module with the float-controls extension, capability and modes for 32 and 64 bits.
    fn module_with_float_controls() -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0300, 0, 10, 0];
        w.extend([(2 << 16) | OP_CAPABILITY, 1]); // Shader
        w.extend([(2 << 16) | OP_CAPABILITY, CAP_SIGNED_ZERO_INF_NAN_PRESERVE]);
        let n = name_words("SPV_KHR_float_controls");
        w.push(((1 + n.len() as u32) << 16) | OP_EXTENSION);
        w.extend(n);
        let entry = module_with_entry("main");
        w.extend(&entry[5..]);
        for width in [32, 64] {
            w.extend([
                (4 << 16) | OP_EXECUTION_MODE,
                1,
                MODE_SIGNED_ZERO_INF_NAN_PRESERVE,
                width,
            ]);
        }
        w
    }

    #[test]
    fn float_controls_fit_the_device() {
        let m = module_with_float_controls();
        // Everything supported: the module itself.
        assert!(matches!(
            fit_float_controls(&m, |_, _| true),
            std::borrow::Cow::Borrowed(_)
        ));
        // Only 32 bits: the 64-bit mode goes, the capability and extension stay.
        let only32 = fit_float_controls(&m, |_, w| w == 32);
        assert_eq!(only32.len(), m.len() - 4);
        assert!(check_module(&only32, "main").is_ok());
        let has = |w: &[u32], x: &[u32]| w.windows(x.len()).any(|y| y == x);
        assert!(has(&only32, &[1, MODE_SIGNED_ZERO_INF_NAN_PRESERVE, 32]));
        assert!(!has(&only32, &[1, MODE_SIGNED_ZERO_INF_NAN_PRESERVE, 64]));
        // Nothing supported: modes, capability and extension all go.
        let none = fit_float_controls(&m, |_, _| false);
        let mut want = vec![MAGIC, 0x0001_0300, 0, 10, 0, (2 << 16) | OP_CAPABILITY, 1];
        want.extend(&module_with_entry("main")[5..]);
        assert_eq!(&*none, &want[..]);
        // Garbage comes back as it is.
        assert_eq!(&*fit_float_controls(&[1, 2, 3], |_, _| false), &[1, 2, 3]);
    }

    /// Each float control is fitted on its own: a device with `SignedZeroInfNanPreserve` but
    /// no `DenormPreserve` keeps the first's modes and capability and loses the second's.
    #[test]
    fn float_controls_fit_the_device_each_on_its_own() {
        let mut m = module_with_float_controls();
        // Insert the DenormPreserve capability after the other one, and its modes at the end.
        m.splice(9..9, [(2 << 16) | OP_CAPABILITY, CAP_DENORM_PRESERVE]);
        for width in [32, 64] {
            m.extend([
                (4 << 16) | OP_EXECUTION_MODE,
                1,
                MODE_DENORM_PRESERVE,
                width,
            ]);
        }
        assert!(check_module(&m, "main").is_ok());
        let has = |w: &[u32], x: &[u32]| w.windows(x.len()).any(|y| y == x);
        let no_denorm = fit_float_controls(&m, |c, _| c == FloatControl::SignedZeroInfNanPreserve);
        assert!(check_module(&no_denorm, "main").is_ok());
        assert!(!has(
            &no_denorm,
            &[(2 << 16) | OP_CAPABILITY, CAP_DENORM_PRESERVE]
        ));
        assert!(!has(&no_denorm, &[1, MODE_DENORM_PRESERVE, 32]));
        assert!(has(
            &no_denorm,
            &[(2 << 16) | OP_CAPABILITY, CAP_SIGNED_ZERO_INF_NAN_PRESERVE]
        ));
        assert!(has(&no_denorm, &[1, MODE_SIGNED_ZERO_INF_NAN_PRESERVE, 64]));
        assert_eq!(no_denorm.len(), m.len() - 2 - 8);
        // Denormals kept in 32 bits only: one DenormPreserve mode goes, its capability stays.
        let d32 = fit_float_controls(&m, |c, w| c != FloatControl::DenormPreserve || w == 32);
        assert!(has(&d32, &[1, MODE_DENORM_PRESERVE, 32]));
        assert!(!has(&d32, &[1, MODE_DENORM_PRESERVE, 64]));
        assert!(has(&d32, &[(2 << 16) | OP_CAPABILITY, CAP_DENORM_PRESERVE]));
    }

    #[test]
    fn spirv_val_rejects_a_truncated_module() {
        let e = validate_spirv(&module_with_entry("main")).unwrap_err();
        assert!(e.to_string().contains("SPIR-V"), "{e}");
    }
}
