"""Reading and writing the user's files: one guarded way in (:mod:`.read`) and one guarded way
out (:mod:`.write`), and the record of what the running command reads (:mod:`.guard`) that keeps
outputs off inputs."""

from .guard import OutputError, guarding, note_input, refuse_overlap
from .read import (MAX_DOCUMENT_BYTES, SpecError, check_finite, check_total_size, parse_document, parse_json_line,
                   printable, quote, read_bytes, shorten, read_document, read_json_lines)
from .write import (DOCUMENT_FORMATS, atomic_write_bytes, atomic_write_text, check_output_dir, check_output_file,
                    document_format, dumps_json, format_document, replace_dir, stage_dir, write_document)

__all__ = ["DOCUMENT_FORMATS", "MAX_DOCUMENT_BYTES", "OutputError", "SpecError", "atomic_write_bytes", "atomic_write_text",
           "check_finite", "check_output_dir", "check_output_file", "check_total_size", "document_format", "dumps_json",
           "format_document", "guarding", "note_input", "parse_document", "parse_json_line", "printable", "quote", "read_bytes",
           "read_document", "read_json_lines", "refuse_overlap", "replace_dir", "shorten", "stage_dir", "write_document"]
