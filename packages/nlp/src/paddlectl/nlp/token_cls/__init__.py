"""``nlp.token_cls``: named entities of People's Daily 1998 (PER/LOC/ORG in BIO over characters) with CRF taggers."""
