//! `vkad-viewer [FILE.fut | PROFILE.json] [--compare PROFILE.json] [--input VALUES]`: the
//! desktop viewer for vkad profiles (see the crate documentation of `vkad_viewer`).

use clap::Parser;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "vkad-viewer",
    version,
    about = "View vkad profiles: scope nest, IR stages, kernel timeline, kernel table, comparisons"
)]
struct Args {
    /// A program to open (`.fut`: compile it, then run entries from the window) or a saved
    /// profile (`.json`, as `vkad run --profile-out` writes).
    file: Option<PathBuf>,
    /// A second profile, to compare with the first.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// The input values for runs (Futhark's value format; default: FILE with `.in`).
    #[arg(long)]
    input: Option<PathBuf>,
}

fn main() -> eframe::Result {
    let args = Args::parse();
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("vkad viewer")
            .with_inner_size([1400.0, 860.0]),
        ..Default::default()
    };
    eframe::run_native(
        "vkad viewer",
        options,
        Box::new(move |cc| {
            Ok(Box::new(vkad_viewer::ViewerApp::new(
                &cc.egui_ctx,
                args.file,
                args.compare,
                args.input,
            )))
        }),
    )
}
