/*
 * pamt_sparse.c stand-in: no far block; the flat window spans every
 * covered range, a slot per 2M of the span.
 */
static inline long pamt_sparse_init(const struct tdx_pamt_range *ranges,
				    unsigned int nr, unsigned int *first,
				    unsigned int *last)
{
	*first = 0;
	*last = nr - 1;
	return 0;
}

static inline void pamt_sparse_free(void) { }

static inline atomic_t *pamt_slot_far(unsigned long nr)
{
	return NULL;
}

/* Never called: every slot is in the flat window. */
static inline unsigned long pamt_far_base_pfn(unsigned long far)
{
	return 0;
}
