cached
