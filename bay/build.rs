//! Reads the field docs of weir.h's policy structs (the comment above each
//! field) into `$OUT_DIR/field_docs.rs`, so that each knob of the page can
//! say, in the header's own words, what its C field does: the text stays
//! the header's, and a field the header rewords is reworded here at the
//! next build.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/weir.h");
    println!("cargo:rerun-if-changed={}", header.display());
    let text = std::fs::read_to_string(&header).expect("include/weir.h");
    let mut out = String::from(
        "/// (struct, field, the header's comment above the field), for every\n\
         /// struct of include/weir.h.\n\
         pub static FIELD_DOCS: &[(&str, &str, &str)] = &[\n",
    );
    // Fields of the struct being read: (field, doc); its name comes last.
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut doc = String::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("typedef struct") && line.ends_with('{') {
            inside = true;
            fields.clear();
            doc.clear();
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(rest) = line.strip_prefix('}') {
            let name = rest.trim().trim_end_matches(';').trim();
            for (field, doc) in fields.drain(..) {
                let _ = writeln!(out, "    ({name:?}, {field:?}, {doc:?}),");
            }
            inside = false;
        } else if let Some(comment) = line.strip_prefix("//") {
            if !doc.is_empty() {
                doc.push(' ');
            }
            doc.push_str(comment.trim());
        } else if let Some(decl) = line.strip_suffix(';') {
            // `int64_t probe_ns;`, `double *floor;`, `uint8_t bytes[8];`
            let name = decl
                .rsplit(|c: char| c.is_whitespace() || c == '*')
                .next()
                .unwrap_or("")
                .split('[')
                .next()
                .unwrap_or("");
            fields.push((name.to_string(), std::mem::take(&mut doc)));
        }
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("field_docs.rs");
    std::fs::write(dest, out).expect("writing the knobs' field docs into OUT_DIR");
}
