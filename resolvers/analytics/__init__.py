"""Brand.analytics and Product.analytics: dashboard counters."""
