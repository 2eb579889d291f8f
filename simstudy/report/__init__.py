"""Tables (CSV, Markdown; paper values side by side) and figures."""
from simstudy.report.paper import grandvalet_bengio_table2, table2_comparison, table2_markdown
from simstudy.report.tables import frame_to_markdown, markdown_table

__all__ = ["frame_to_markdown", "grandvalet_bengio_table2", "markdown_table", "table2_comparison", "table2_markdown"]
