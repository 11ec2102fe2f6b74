//! Tests of file previews: which kind each file gets, what is left out and said
//! so, that no escape sequence survives, and snapshots (80x24, 160x48) of the
//! CSV, text and hex previews.

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::*;

fn request<'a>(name: &'a str, bytes: &'a [u8], total: Option<u64>) -> PreviewRequest<'a> {
    PreviewRequest {
        name,
        content_type: None,
        bytes,
        total_size: total,
        width: 78,
        height: 20,
        colors: true,
    }
}

fn text_of(preview: &Preview) -> Vec<String> {
    preview
        .text(&Theme::dark())
        .lines
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Draws the preview of `req` filling a `width` x `height` screen, with the
/// budget the caller would pass (the block's inner area less the note line).
fn screen(mut req: PreviewRequest<'_>, width: u16, height: u16) -> TestBackend {
    req.width = width - 2;
    req.height = height - 3;
    let preview = Preview::build(&req);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| preview.render(f.area(), f.buffer_mut(), &Theme::dark(), 0))
        .unwrap();
    terminal.backend().clone()
}

fn report_csv() -> String {
    let mut csv = String::from("city,country,population,note\n");
    let rows = [
        ("Lagos", "Nigeria", 15_388_000, "largest in Africa"),
        ("São Paulo", "Brazil", 12_325_232, "\"quoted, with comma\""),
        ("Tokyo", "Japan", 13_960_000, "\"two\nlines\""),
        (
            "Zürich",
            "Switzerland",
            421_878,
            "\u{1b}]52;c;aGk=\u{7}clipboard?",
        ),
    ];
    for i in 0..40 {
        let (city, country, pop, note) = rows[i % rows.len()];
        csv.push_str(&format!("{city} {i},{country},{pop},{note}\n"));
    }
    csv
}

#[test]
fn csv_becomes_a_table_with_a_header() {
    let csv = report_csv();
    let p = Preview::build(&request(
        "report.csv",
        csv.as_bytes(),
        Some(csv.len() as u64),
    ));
    let Body::Table(table) = &p.body else {
        panic!("{:?}", p.body)
    };
    assert_eq!(table.rows[0], ["city", "country", "population", "note"]);
    assert_eq!(table.rows.len(), 19, "header + 18 rows in a 20-row budget");
    assert_eq!(table.rows[2][3], "quoted, with comma");
    assert_eq!(table.rows[3][3], "two↵lines");
    assert_eq!(
        table.rows[4][3], "clipboard?",
        "the OSC 52 sequence is gone"
    );
    assert_eq!(p.note.as_deref(), Some("first 18 rows shown"));
    let width: usize = table.widths.iter().sum::<usize>() + 3 * (table.widths.len() - 1);
    assert!(width <= 78, "{width}");
}

#[test]
fn tsv_by_content_type_and_a_cut_head() {
    let tsv = "a\tb\n1\t2\n3\t4\n5\t";
    let mut req = request("data", tsv.as_bytes(), Some(1_000_000));
    req.content_type = Some("text/tab-separated-values; charset=utf-8");
    let p = Preview::build(&req);
    let Body::Table(table) = &p.body else {
        panic!("{:?}", p.body)
    };
    // The last row may have been cut by the end of the head: it is dropped.
    assert_eq!(table.rows, [vec!["a", "b"], vec!["1", "2"], vec!["3", "4"]]);
    assert_eq!(
        p.note.as_deref(),
        Some("first 14 B of 977 KiB shown · first 2 rows shown")
    );
}

#[test]
fn text_is_highlighted_by_extension_and_cleaned() {
    let src = "def f(x):\n\treturn x  # \u{1b}[2J\u{1b}]0;pwned\u{7}done\n";
    let p = Preview::build(&request("tool.py", src.as_bytes(), None));
    assert_eq!(text_of(&p), ["def f(x):", "        return x  # done"]);
    let Body::Text(lines) = &p.body else {
        panic!("{:?}", p.body)
    };
    assert!(lines[0].spans.len() > 1, "keywords are styled apart");
    assert!(lines[0].spans.iter().any(|s| s.style.fg.is_some()));

    let mut plain = request("tool.py", src.as_bytes(), None);
    plain.colors = false;
    let Body::Text(lines) = Preview::build(&plain).body else {
        panic!()
    };
    assert!(
        lines
            .iter()
            .flat_map(|l| &l.spans)
            .all(|s| s.style.fg.is_none())
    );
}

#[test]
fn long_text_is_cut_to_the_budget_and_says_so() {
    let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let p = Preview::build(&request(
        "notes.txt",
        text.as_bytes(),
        Some(10 * 1024 * 1024),
    ));
    let lines = text_of(&p);
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[19], "line 19");
    assert_eq!(
        lines[20],
        "(first 790 B of 10 MiB shown · first 20 lines shown)"
    );
}

#[test]
fn a_character_cut_by_the_head_is_dropped_not_binary() {
    let mut bytes = "aé".repeat(10).into_bytes();
    bytes.push(0xc3); // the first byte of another é
    let p = Preview::build(&request("x.txt", &bytes, Some(1000)));
    assert_eq!(text_of(&p)[0], "aé".repeat(10));
    // The same bytes as a whole file are not valid UTF-8: binary.
    let p = Preview::build(&request("x.txt", &bytes, Some(bytes.len() as u64)));
    assert!(matches!(p.body, Body::Hex(_)));
}

#[test]
fn json_is_pretty_printed_in_file_order() {
    let json = br#"{"zeta":1,"alpha":[1,2,{}],"nested":{"k":"v, \"q\" {x}"},"empty":[]}"#;
    let p = Preview::build(&request("data.json", json, None));
    assert_eq!(
        text_of(&p),
        [
            "{",
            "  \"zeta\": 1,",
            "  \"alpha\": [",
            "    1,",
            "    2,",
            "    {}",
            "  ],",
            "  \"nested\": {",
            "    \"k\": \"v, \\\"q\\\" {x}\"",
            "  },",
            "  \"empty\": []",
            "}",
        ]
    );
}

#[test]
fn json_that_does_not_parse_is_shown_as_text() {
    let p = Preview::build(&request("bad.json", b"{\"a\": nope}", None));
    assert_eq!(
        text_of(&p),
        ["{\"a\": nope}", "(not valid JSON; shown as text)"]
    );
    // A cut head cannot be checked and is re-indented as far as it goes.
    let mut req = request("big.json", b"[{\"a\":1},{\"b\"", Some(1 << 20));
    req.content_type = Some("application/json");
    let p = Preview::build(&req);
    assert_eq!(text_of(&p)[..3], ["[", "  {", "    \"a\": 1"]);
}

#[test]
fn deep_json_costs_no_more_than_the_lines_shown() {
    let deep = "[".repeat(50_000);
    let pretty = pretty_json(&deep, 20);
    assert_eq!(pretty.lines().count(), 21);
    assert!(pretty.len() < 2_000, "{}", pretty.len());
}

#[test]
fn binary_is_a_hex_head() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let p = Preview::build(&request("blob.bin", &bytes, Some(3 * 1024 * 1024)));
    let lines = text_of(&p);
    assert_eq!(
        lines[0],
        "00000000  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|"
    );
    assert_eq!(
        lines[2],
        "00000020  20 21 22 23 24 25 26 27  28 29 2a 2b 2c 2d 2e 2f  | !\"#$%&'()*+,-./|"
    );
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[20], "(first 320 B of 3.0 MiB shown)");
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([
            u8::try_from(x % 256).unwrap(),
            u8::try_from(y % 256).unwrap(),
            0,
        ])
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

#[test]
fn images_are_decoded_for_the_image_path() {
    let bytes = png(32, 16);
    // The magic number decides, whatever the name says.
    let p = Preview::build(&request("plot.dat", &bytes, Some(bytes.len() as u64)));
    let img = p.image().expect("decoded");
    assert_eq!((img.width(), img.height()), (32, 16));
    assert_eq!(text_of(&p), ["PNG image, 32 × 16 pixels"]);
}

#[test]
fn an_image_that_cannot_be_decoded_falls_back_to_hex() {
    let bytes = png(32, 16);
    let cut = &bytes[..bytes.len() / 2];
    let p = Preview::build(&request("plot.png", cut, Some(bytes.len() as u64)));
    assert!(matches!(p.body, Body::Hex(_)));
    let note = p.note.unwrap();
    assert!(note.starts_with("first "), "{note}");
    assert!(note.contains("PNG image not decoded"), "{note}");

    // Too many pixels for the limits: refused, not allocated.
    let wide = png(MAX_IMAGE_SIDE + 1, 1);
    let p = Preview::build(&request("wide.png", &wide, Some(wide.len() as u64)));
    assert!(p.image().is_none());
}

#[test]
fn empty_files_and_hostile_names() {
    let p = Preview::build(&request("a\u{1b}]0;x\u{7}b\nc.txt", b"", Some(0)));
    assert_eq!(
        p.name, "a\\033]0;x\\007b\\nc.txt",
        "escaped as ls -b shows it"
    );
    assert_eq!(text_of(&p), ["(empty file)"]);
}

#[test]
fn snapshot_csv_preview() {
    let csv = report_csv();
    let req = request("report.csv", csv.as_bytes(), Some(csv.len() as u64));
    assert_snapshot!("csv_80x24", screen(req, 80, 24));
    assert_snapshot!("csv_160x48", screen(req, 160, 48));
}

#[test]
fn snapshot_text_preview() {
    let src: String = [
        "\"\"\"Summarise the agent's report.\"\"\"",
        "import pandas as pd",
        "",
        "def summarise(path: str) -> pd.DataFrame:",
        "\tdf = pd.read_csv(path)",
        "\treturn df.describe()  # \u{1b}[31mred?\u{1b}[0m",
        "",
        "if __name__ == \"__main__\":",
        "\tprint(summarise(\"/mnt/data/report.csv\"))",
    ]
    .iter()
    .cycle()
    .take(60)
    .map(|l| format!("{l}\n"))
    .collect();
    let req = request("summarise.py", src.as_bytes(), Some(200_000));
    assert_snapshot!("text_80x24", screen(req, 80, 24));
    assert_snapshot!("text_160x48", screen(req, 160, 48));
}

#[test]
fn snapshot_hex_preview() {
    let mut bytes = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0".to_vec();
    bytes.extend((0..=255u8).cycle().take(2048));
    let req = request("a.out", &bytes, Some(1_234_567));
    assert_snapshot!("hex_80x24", screen(req, 80, 24));
    assert_snapshot!("hex_160x48", screen(req, 160, 48));
}
