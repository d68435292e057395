"""A game repository's files, read strictly into the protocol's data (DESIGN §2): the layout, one table of file
kinds, their readers, the line reader of report and press files, and the bounded parse cache."""
