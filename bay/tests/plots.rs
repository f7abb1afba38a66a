//! What the page draws and shows is described here, not in the page: each
//! plotted column has a unit and a kind, each plot one unit on its y axis,
//! each knob a unit or its choices' words, and each policy knob the
//! header's comment on its C field.

use bay::{scenarios::ALL, KINDS};

#[test]
fn every_plotted_column_is_described_and_produced() {
    for sc in ALL {
        let series = (sc.run)(&sc.defaults(), 42);
        for plot in sc.plots {
            for name in std::iter::once(&plot.x).chain(plot.series) {
                let col = sc
                    .column(name)
                    .unwrap_or_else(|| panic!("{}: {name} has no Column", sc.id));
                assert!(!col.unit.is_empty(), "{}: {name} has no unit", sc.id);
                assert!(
                    KINDS.contains(&col.kind),
                    "{}: {name}: kind {}",
                    sc.id,
                    col.kind
                );
                assert!(
                    !series.column(name).is_empty(),
                    "{}: the run has no {name}",
                    sc.id
                );
                assert_eq!(
                    series.column(name).len(),
                    series.column(plot.x).len(),
                    "{}: {name} against {}",
                    sc.id,
                    plot.x
                );
            }
            let unit = sc.column(plot.series[0]).unwrap().unit;
            for name in plot.series {
                assert_eq!(
                    sc.column(name).unwrap().unit,
                    unit,
                    "{}: {name} on a {unit} axis",
                    sc.id
                );
            }
            assert!(
                !plot.x_title.is_empty() && !plot.y_title.is_empty(),
                "{}",
                sc.id
            );
        }
    }
}

#[test]
fn every_knob_has_a_unit_or_words_and_says_what_it_does() {
    for sc in ALL {
        for k in sc.knobs {
            let at = format!("{}.{}", sc.id, k.name);
            if k.choices.is_empty() {
                assert!(!k.unit.is_empty(), "{at}: no unit");
            } else {
                // A choice is its words; the value, the word's index, is the
                // integer the copied C writes.
                assert_eq!((k.min, k.step), (0.0, 1.0), "{at}");
                assert_eq!(k.max as usize + 1, k.choices.len(), "{at}");
                assert!(
                    k.c.map_or(true, |c| c.int),
                    "{at}: a choice is an int field"
                );
            }
            // No numbered choices, no unit in the label: they have places.
            assert!(!k.label.contains('('), "{at}: {:?}", k.label);
            match sc.field_doc(k) {
                Some((field, doc)) => {
                    assert!(!doc.is_empty(), "{at}: weir.h has no comment on {field}")
                }
                None => assert!(
                    !k.about.is_empty() || k.label.starts_with("traffic"),
                    "{at}: a policy knob with no C field says what it does"
                ),
            }
        }
    }
}

#[test]
fn a_choice_lands_in_the_c_literal_as_its_integer() {
    let sc = bay::Scenario::find("backoff").unwrap();
    let at = sc.knobs.iter().position(|k| k.name == "jitter").unwrap();
    for (i, word) in sc.knobs[at].choices.iter().enumerate() {
        let mut values = sc.defaults();
        values[at] = i as f64;
        let c = sc.c_literal(&values);
        assert!(c.contains(&format!(".jitter = {i},")), "{word}: {c}");
    }
}
