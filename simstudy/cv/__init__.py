"""Cross-validation building blocks: split schemes (:mod:`.splits`), the one CV loop and nested
CV fitting (:mod:`.loop`), and losses (:mod:`.losses`)."""
