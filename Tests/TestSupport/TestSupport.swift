// TestSupport placeholder
