//! "Copy as C" writes designated initialisers, so a policy field the bay
//! has no knob for would start at zero, not at the preset. This keeps the
//! knob tables in step with include/weir.h: every field of each panel's C
//! policy struct, and of the further structs it copies (the retry panel's
//! backoff), but `reserved`, has a knob, so the literal names it.

use bay::scenarios::ALL;

/// The field names of `typedef struct ... { ... } name;` in the header.
fn fields(header: &str, name: &str) -> Vec<String> {
    let end = header
        .find(&format!("}} {name};"))
        .unwrap_or_else(|| panic!("{name} not in weir.h"));
    let start = header[..end].rfind("typedef struct").unwrap();
    header[start..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && l.ends_with(';'))
        .filter_map(|l| l.trim_end_matches(';').split_whitespace().last())
        .map(|f| f.trim_start_matches('*').to_string())
        .collect()
}

#[test]
fn every_policy_field_in_weir_h_has_a_knob() {
    let header =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../include/weir.h")).unwrap();
    for sc in ALL.iter().filter(|s| !s.c_type.is_empty()) {
        // The panel's `policy`, then the further structs it copies.
        let structs =
            std::iter::once(("", sc.c_type)).chain(sc.c_more.iter().map(|&(v, t, _)| (v, t)));
        for (var, ty) in structs {
            let named: Vec<&str> = sc
                .knobs
                .iter()
                .filter_map(|k| k.c.filter(|c| c.of == var).map(|c| c.field))
                .collect();
            for field in fields(&header, ty) {
                assert!(
                    field == "reserved" || named.contains(&field.as_str()),
                    "{}: {}.{} has no knob in bay/src/scenarios.rs, so copy as C would leave it 0",
                    sc.id,
                    ty,
                    field
                );
            }
        }
    }
}
