//! `vkad-viewer`: a desktop viewer for vkad profiles ([`vkad_profile::Profile`]).
//!
//! A profile holds a program's source, its IR at each stage of the pipeline, the AD report's
//! scope tree and one or more runs (every kernel launch with its device timestamps). The viewer
//! shows them in panels, each a function `ui(ui, ...)` of the data it shows, so that each can be
//! rendered headlessly (the snapshot tests in `tests/`):
//!
//! - [`scopes`]: the scope nest as nested boxes, each coloured by how many times its forward
//!   sweep runs, with checkpoint memory for loops and the device time of its kernels;
//! - [`ir`]: the source and the IR before AD, after AD and after simplification side by side,
//!   the lines of the selected scope highlighted in each;
//! - [`timeline`]: the kernel launches of a run on a zoomable time axis, one lane per queue
//!   submission;
//! - [`kernels`]: the kernels of a run in a table sortable by total time, launches and
//!   achieved GB/s, and a bar chart of the primal and gradient runs' device time;
//! - [`compare`]: two profiles side by side (before/after a change, or two devices).
//!
//! [`fonts`] adds a fallback font for the mathematical notation of programs (`Σ`, `‖`, `∇`,
//! subscripts) to egui's defaults. [`app`] puts the panels in a window; [`runner`] compiles
//! and runs programs on a worker thread (through `vkad_spirv::profile`), so that the window
//! never waits for the compiler or the device. [`model`] holds what the panels share: the loaded profile with its derived indices
//! and the view state (the selected scope, run and sort order).

pub mod app;
pub mod compare;
pub mod fonts;
pub mod ir;
pub mod kernels;
pub mod model;
pub mod runner;
pub mod scopes;
pub mod timeline;

pub use app::ViewerApp;
pub use model::{Loaded, View};
