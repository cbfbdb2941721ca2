//! The errors of the Vulkan backend: one enum, so that callers (the CLI, the test runner,
//! `vkad bench`, applications) decide by variant what a failure means.
//!
//! The message of each variant is the one a user reads, with the source location where it is
//! known: `file:line:col: index 5 out of bounds ...` for runtime errors (as the interpreter
//! prints them, so that a test's expected `error:` matches both), `not supported on the Vulkan
//! backend: WHAT at file:line:col` for constructs the backend cannot run yet.

use std::fmt;
use vkad_core::diag::SrcLoc;
use vkad_core::testing::RunError;
use vkad_vk::VkError;

/// What kind of runtime failure of the program an [`Error::Runtime`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeKind {
    /// An index or slice out of the bounds of its array.
    Bounds,
    /// Integer division or remainder by zero.
    Division,
    /// A failed `assert`.
    Assert,
    /// An integer raised to a negative power.
    NegativeExponent,
    /// Arrays whose shapes do not fit the operation (different lengths, a reshape of the wrong
    /// size, an invalid permutation).
    Shape,
    /// A size that is negative or too large for the device.
    Size,
    /// Arguments that do not fit the entry point's parameters.
    Arguments,
    /// Any other failure of a scalar operation (as the interpreter's `primops` reports it).
    Arithmetic,
}

/// Everything that can go wrong when the Vulkan backend compiles or runs a program.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A construct the backend (`device: None`) or the device (`Some(name)`, e.g. lavapipe's
    /// loop limit, a missing `shaderFloat64`) cannot run.
    #[error("{}", not_supported(what, loc, device))]
    NotSupported {
        what: String,
        loc: Option<SrcLoc>,
        device: Option<String>,
    },
    /// A thread of a kernel ran more loop iterations than lavapipe allows one invocation
    /// (`LAVAPIPE_LOOP_LIMIT` of module `codegen::gen`, counted as lavapipe does): a limit of
    /// the device (`device`), reported for the loop at `loc`. A caller may run the loop another
    /// way.
    #[error("{}", not_supported(LOOP_LIMIT, loc, &Some(device.clone())))]
    LoopLimit { device: String, loc: Option<SrcLoc> },
    /// The program failed on its input.
    #[error("{}", Located(loc, message))]
    Runtime {
        kind: RuntimeKind,
        message: String,
        loc: Option<SrcLoc>,
    },
    /// The device failed: out of memory, lost, a timeout, a validation message (never
    /// [`VkError::Unsupported`]: that is [`Error::NotSupported`], see the `From` conversion).
    #[error(transparent)]
    Device(VkError),
    /// Allocating an array of `bytes` bytes for the statement at `loc` failed (the device or the
    /// host is out of memory, or the size exceeds what the device allows).
    #[error("{}", Located(loc, &format!("cannot allocate {bytes} bytes: {source}")))]
    Allocation {
        bytes: u64,
        loc: Option<SrcLoc>,
        #[source]
        source: VkError,
    },
    /// The entry point could not be compiled: its diagnostic, rendered with its snippet.
    #[error("{message}")]
    Entry {
        message: String,
        /// The diagnostic is a `not supported: ...` one.
        not_supported: bool,
    },
    /// The program's source did not compile ([`crate::Program::compile`] from source text).
    #[error(transparent)]
    Compile(#[from] vkad_core::CompileError),
    /// Writing a file (the modules of `vkad spirv`) failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A bug in vkad: the backend was given IR it should not see, or misused a builder.
    #[error("{}", Located(loc, &format!("internal error: {message}")))]
    Internal {
        message: String,
        loc: Option<SrcLoc>,
    },
}

/// The result of the backend's fallible operations.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A construct the backend cannot run yet, at `loc`.
    pub fn unsupported(what: impl Into<String>, loc: &Option<SrcLoc>) -> Error {
        Error::NotSupported {
            what: what.into(),
            loc: loc.clone(),
            device: None,
        }
    }
    /// A failure of the program on its input.
    pub fn runtime(kind: RuntimeKind, loc: &Option<SrcLoc>, message: impl Into<String>) -> Error {
        Error::Runtime {
            kind,
            message: message.into(),
            loc: loc.clone(),
        }
    }
    /// A bug in vkad, at `loc` of the program being run.
    pub fn internal(loc: &Option<SrcLoc>, message: impl Into<String>) -> Error {
        Error::Internal {
            message: message.into(),
            loc: loc.clone(),
        }
    }
    /// Allocating `bytes` bytes at `loc` failed with `source`; a feature the device lacks stays
    /// [`Error::NotSupported`].
    pub fn allocation(bytes: u64, loc: &Option<SrcLoc>, source: VkError) -> Error {
        match source {
            VkError::Unsupported { .. } => source.into(),
            source => Error::Allocation {
                bytes,
                loc: loc.clone(),
                source,
            },
        }
    }
    /// The program has no entry point `entry`.
    pub fn no_entry(entry: &str) -> Error {
        Error::runtime(
            RuntimeKind::Arguments,
            &None,
            format!("no entry point named `{entry}`"),
        )
    }
    /// A bug in vkad where no source location is known.
    pub fn bug(message: impl Into<String>) -> Error {
        Error::internal(&None, message)
    }
    /// Whether this is [`Error::NotSupported`] (by the backend or the device), or an entry
    /// point whose compilation is not supported.
    pub fn is_not_supported(&self) -> bool {
        matches!(
            self,
            Error::NotSupported { .. }
                | Error::LoopLimit { .. }
                | Error::Entry {
                    not_supported: true,
                    ..
                }
        )
    }
}

impl From<VkError> for Error {
    /// A feature the device lacks is [`Error::NotSupported`] (with the device's name); every
    /// other Vulkan error is [`Error::Device`].
    fn from(e: VkError) -> Error {
        match e {
            VkError::Unsupported { device, feature } => Error::NotSupported {
                what: feature,
                loc: None,
                device: Some(device),
            },
            e => Error::Device(e),
        }
    }
}

impl From<rspirv::dr::Error> for Error {
    fn from(e: rspirv::dr::Error) -> Error {
        Error::internal(&None, format!("SPIR-V builder: {e:?}"))
    }
}

impl From<Error> for RunError {
    fn from(e: Error) -> RunError {
        let m = e.to_string();
        if e.is_not_supported() {
            return RunError::NotSupported(m);
        }
        match e {
            Error::Runtime { .. } => RunError::Runtime(m),
            Error::Device(_) | Error::Allocation { .. } | Error::Io { .. } => RunError::Device(m),
            Error::NotSupported { .. }
            | Error::LoopLimit { .. }
            | Error::Internal { .. }
            | Error::Entry { .. }
            | Error::Compile(_) => RunError::Internal(m),
        }
    }
}

/// What [`Error::LoopLimit`] says.
const LOOP_LIMIT: &str = "loop exceeded lavapipe's 65535-iteration limit";

/// `file:line:col: message`, or the message alone.
struct Located<'a, M: fmt::Display + ?Sized>(&'a Option<SrcLoc>, &'a M);

impl<M: fmt::Display + ?Sized> fmt::Display for Located<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(l) => write!(f, "{l}: {}", self.1),
            None => write!(f, "{}", self.1),
        }
    }
}

fn not_supported(what: &str, loc: &Option<SrcLoc>, device: &Option<String>) -> String {
    let by = match device {
        Some(d) => format!("by the Vulkan device {d}"),
        None => "on the Vulkan backend".to_string(),
    };
    match loc {
        Some(l) => format!("not supported {by}: {what} at {l}"),
        None => format!("not supported {by}: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc() -> Option<SrcLoc> {
        Some(SrcLoc {
            file: "p.fut".into(),
            line: 3,
            col: 7,
        })
    }

    #[test]
    fn messages_name_the_location_as_users_read_them() {
        let e = Error::runtime(RuntimeKind::Bounds, &loc(), "index 5 out of bounds");
        assert_eq!(e.to_string(), "p.fut:3:7: index 5 out of bounds");
        let e = Error::unsupported("a `map` returning accumulators", &loc());
        assert_eq!(
            e.to_string(),
            "not supported on the Vulkan backend: a `map` returning accumulators at p.fut:3:7"
        );
        let e = Error::internal(&None, "pattern arity");
        assert_eq!(e.to_string(), "internal error: pattern arity");
    }

    #[test]
    fn a_missing_device_feature_is_not_supported() {
        let e: Error = VkError::Unsupported {
            device: "llvmpipe".into(),
            feature: "float64".into(),
        }
        .into();
        assert!(e.is_not_supported());
        assert_eq!(
            e.to_string(),
            "not supported by the Vulkan device llvmpipe: float64"
        );
        assert!(matches!(RunError::from(e), RunError::NotSupported(_)));
        let e: Error = VkError::DeviceLost.into();
        assert!(!e.is_not_supported());
        assert!(matches!(RunError::from(e), RunError::Device(_)));
    }
}
