//! The viewer's fonts: egui's defaults (Ubuntu Light for text, Hack for code and numbers),
//! then DejaVu Sans Mono as the last fallback of both families.
//!
//! Programs and their comments use mathematical notation (`Σ`, `½`, `‖p - c‖²`, `∇`, `≤`,
//! subscripts such as `xᵢ`, `w₀`), which egui's default fonts partly lack: Hack has no
//! subscript letters (`ᵢ`, `ⱼ`, `ᵀ`) nor subscript digits, and Ubuntu Light lacks `‖`, `∇`,
//! `∈`, `⊙`, `⌊`, `→` and the subscript letters; a missing glyph is drawn as a box ("tofu").
//! DejaVu Sans Mono (from the `dejavu` crate, 333 KiB) has all of them. Hack is derived from
//! DejaVu Sans Mono (through Bitstream Vera Sans Mono), so a fallback glyph in the source and
//! IR views has the width and style of its neighbours. Its licence (the Bitstream Vera
//! licence, DejaVu's changes public domain) permits embedding and redistribution.

use egui::{FontData, FontDefinitions, FontFamily};
use std::sync::Arc;

/// The name of the fallback font in [`FontDefinitions::font_data`].
pub const FALLBACK: &str = "DejaVuSansMono";

/// egui's default fonts with [`FALLBACK`] last in the proportional and monospace families.
pub fn definitions() -> FontDefinitions {
    let mut defs = FontDefinitions::default();
    defs.font_data.insert(
        FALLBACK.to_string(),
        Arc::new(FontData::from_static(dejavu::sans_mono::regular())),
    );
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        defs.families
            .entry(family)
            .or_default()
            .push(FALLBACK.to_string());
    }
    defs
}

/// Installs [`definitions`] in `ctx` (they take effect at the next pass, or at once when
/// nothing has been laid out in this one).
pub fn install(ctx: &egui::Context) {
    ctx.set_fonts(definitions());
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::epaint::text::{Fonts, TextOptions};
    use egui::FontId;

    /// The characters of `text` that the fonts of `family` cannot draw (control characters
    /// such as newlines and tabs have no glyphs in any font and are not drawn).
    fn missing(fonts: &mut Fonts, family: FontFamily, text: &str) -> String {
        let id = FontId::new(14.0, family);
        let mut out: Vec<char> = text
            .chars()
            .filter(|c| !c.is_control() && !fonts.has_glyph(&id, *c))
            .collect();
        out.sort_unstable();
        out.dedup();
        out.into_iter().collect()
    }

    /// The notation of the issue (item 3 of issue 14), and what egui's defaults lack of it.
    const NOTATION: &str = "Σ ½ ₀₁₂₃ ᵢⱼ xᵢⱼ ‖p - c‖² ∇f ≤ ≥ ∈ ⊙ ⌊x⌋ → √ ∂ ∑ × ÷ · … µ α σ ᵀ ⁻¹";

    #[test]
    fn the_fallback_covers_the_notation_in_both_families() {
        let mut fonts = Fonts::new(TextOptions::default(), definitions());
        for family in [FontFamily::Proportional, FontFamily::Monospace] {
            assert_eq!(
                missing(&mut fonts, family.clone(), NOTATION),
                "",
                "{family:?}"
            );
        }
        // egui's defaults alone lack some of it: the fallback is what draws them.
        let mut plain = Fonts::new(TextOptions::default(), FontDefinitions::default());
        assert!(!missing(&mut plain, FontFamily::Proportional, NOTATION).is_empty());
        assert!(!missing(&mut plain, FontFamily::Monospace, NOTATION).is_empty());
    }

    #[test]
    fn the_fallback_comes_after_the_defaults() {
        let defs = definitions();
        for family in [FontFamily::Proportional, FontFamily::Monospace] {
            let chain = &defs.families[&family];
            assert_eq!(chain.last().map(String::as_str), Some(FALLBACK));
            assert_eq!(
                chain[..chain.len() - 1],
                FontDefinitions::default().families[&family][..]
            );
        }
    }

    /// Every character of every program of `benches/paper` (whichever are there) and of the
    /// viewer's sample programs has a glyph, in both families.
    #[test]
    fn the_paper_benchmarks_sources_have_every_glyph() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("benches/paper"))
            .expect("benches/paper")
            .chain(std::fs::read_dir(root.join("viewer/tests/data")).expect("tests/data"))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "fut"))
            .collect();
        files.sort();
        assert!(files.iter().any(|f| f.ends_with("kmeans.fut")), "{files:?}");
        let mut fonts = Fonts::new(TextOptions::default(), definitions());
        for f in &files {
            let text = std::fs::read_to_string(f).expect("source");
            for family in [FontFamily::Proportional, FontFamily::Monospace] {
                let m = missing(&mut fonts, family.clone(), &text);
                assert_eq!(m, "", "{} in {family:?}", f.display());
            }
        }
    }
}
