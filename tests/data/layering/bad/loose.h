// A header outside every layer folder.
