"""Report writers: each turns an AuditResult into one format and nothing else."""
