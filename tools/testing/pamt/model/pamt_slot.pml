/*
 * SPDX-License-Identifier: GPL-2.0
 *
 * Promela model of one TDX Dynamic PAMT slot word (arch/x86/virt/vmx/tdx/
 * pamt_slot.c, pamt_shrink.c, pamt_internal.h) and of the fake TDX module's
 * view of the same 2M range.  Names follow the C code.
 *
 * What is modelled:
 *  - the slot word, with the flag bits of pamt_internal.h and a 3-bit
 *    count (PAMT_SLOT_REF_MASK is 23 bits in C); PAMT_SLOT_REF_MAX is
 *    twice the pages of a range less one, as in C, with SLOT_PAGES for
 *    512: with HELD the getter takes a second reference (a page's next
 *    use before the put of its last), which on a range whose other pages
 *    hold references meets it and must answer -EOVERFLOW, changing
 *    nothing;
 *  - tdx_pamt_get(): one atomic add on the word, a reference on a word
 *    INSTALLED and not TRANSIT, else a pending count (the ghost `pend`
 *    counts those, and a count one reference too many);
 *    pamt_slot_get_slow() (revive, 0->1 with pamt_slot_add() by the get
 *    whose turn it is, pamt_slot_wait() on a transition, under one
 *    deadline for the whole get, modelled as a budget of waits, and
 *    pamt_slot_uncount() on the way out); owners publish by adding, so
 *    pending counts stay, and become references when INSTALLED is
 *    published (pamt_slot_publish());
 *    tdx_pamt_put() / pamt_slot_put_slow(),
 *    pamt_slot_remove(), the idle LRU (pamt_lru_add()
 *    at install and at an idle put, a walk's taking an entry off and
 *    pamt_lru_dispose() clearing its bit) and pamt_reclaim_slot() (from
 *    the shrinker, and from the idle cap in pamt_shrink_idle_inc());
 *  - PAMT.ADD and PAMT.REMOVE, which may succeed, fail, or answer BUSY; the
 *    C code retries BUSY PAMT_BUSY_RETRIES times, the model once.  A try
 *    is one transition: on BUSY the owner publishes the old word (EMPTY,
 *    or the IDLE word it took) and, after its backoff, a get looks at the
 *    slot again, a removal takes it again only if it holds that word;
 *  - NPAIRS pairs, each with exactly one owner: the page allocator, the
 *    magazines (one pool: every CPU's magazines are one owner here), the
 *    module, or one CPU (process) holding it in a local.
 *
 * The model is sequentially consistent: the acquire/release orderings of
 * the C code are what makes that a fair abstraction of the word, since
 * nobody but the TRANSIT owner writes the word while TRANSIT is set.
 *
 * PAMT_SLOT_HOLE / PAMT_SLOT_NOT_COVERED: the modelled slot is covered, so
 * the HOLE branches below (-EINVAL) are present for fidelity but dead.
 *
 * Build knobs (spin -D...):
 *   CAP_SWEEP        the idle cap's reclaim from put; off
 *                    by default, it multiplies the state space by ten
 *   BUSY_MAX=n       the module answers BUSY at most n times in a run
 *                    (default: BUSY forever is allowed)
 *   PAMT_WAIT_BUDGET=n  waits a get may begin under its deadline (default 1)
 *   MUTANT_NO_TRANSIT, MUTANT_RECLAIM_NO_RECHECK,
 *   MUTANT_ADD_FAIL_LOSES_PAIR, MUTANT_BUSY_KEEPS_TRANSIT,
 *   MUTANT_REOWN_BLIND
 *                    deliberately broken variants; see the README.  The
 *                    last is the C code before one of its starvation
 *                    fixes.
 *   HELD             the range starts ACTIVE: a TD uses SLOT_PAGES of its
 *                    4K pages, each under a reference, and a holder
 *                    process unmaps each with a put; one getter instead
 *                    of two, which takes a second reference
 *   MUTANT_OVERFLOW_NO_CHECK  get takes a reference beyond
 *                    PAMT_SLOT_REF_MAX (with HELD)
 *   MUTANT_NO_UNCOUNT  a get that fails leaves its count in the word
 *   MUTANT_PUBLISH_STORE  owners publish with a store, as before the
 *                    atomic add: the counts of waiting gets are lost
 */

/* ---- pamt_internal.h ---------------------------------------------------- */
#define PAMT_SLOT_REF_MASK	7
#define PAMT_SLOT_REF_MAX	(2 * SLOT_PAGES - 1)	/* 1023 in C */
#define PAMT_SLOT_INSTALLED	8	/* the module holds a pair */
#define PAMT_SLOT_TRANSIT	16	/* one CPU owns an ADD or REMOVE */
#define PAMT_SLOT_LEAKED	32	/* REMOVE failed; never reclaimed */
#define PAMT_SLOT_HOLE		64	/* not covered; every call -EINVAL */

/* enum pamt_slot_state */
#define PAMT_SLOT_EMPTY		0
#define PAMT_SLOT_ADDING	1
#define PAMT_SLOT_ACTIVE	2
#define PAMT_SLOT_IDLE		3
#define PAMT_SLOT_REMOVING	4
#define PAMT_SLOT_NOT_COVERED	5

#define pamt_slot_refs(w)	((w) & PAMT_SLOT_REF_MASK)

/* enum pamt_pair_dest */
#define PAMT_PAIR_TO_MAG	0
#define PAMT_PAIR_TO_FREE	1

/* Bounds, shrunk from the C values: BUSY retries (10); reclaim takes one
 * index entry per call (the shrinker is called again). */
#ifndef PAMT_BUSY_RETRIES
#define PAMT_BUSY_RETRIES	1
#endif
#ifndef PAMT_WAIT_BUDGET
#define PAMT_WAIT_BUDGET	1	/* waits a get begins under its deadline */
#endif

/* SEAMCALL status, as pamt_status_errno() sorts it. */
#define TDX_PAMT_SUCCESS	0
#define TDX_PAMT_OPERAND_BUSY	1
#define TDX_PAMT_ERROR		2	/* anything else: -EIO */

/* errno, positive here */
#define EBUSY		1
#define EIO		2
#define ENOMEM		3
#define EINVAL		4
#define EOVERFLOW	5
#define EAGAIN		6	/* reclaim: no REMOVE attempted */

/* ---- the configuration ------------------------------------------------- */
#ifdef HELD
#define NGET		1	/* getter processes: get, use a page, put */
#else
#define NGET		2	/* getter processes: get, use a page, put */
#endif
/* The 512 4K pages of a range (TDX_PAMT_PAGES_PER_SLOT), shrunk. */
#define SLOT_PAGES	2
#define NITER		1	/* get/put rounds per getter */
#define NPAIRS		3
#define NO_PAIR		255

/* Pair owners; a CPU (process) p owns a pair as OWN_CPU + p. */
#define OWN_FREE	0	/* the page allocator */
#define OWN_MAG		1	/* a magazine */
#define OWN_MODULE	2	/* installed in the TDX module */
#define OWN_CPU		3
#define OWN_ME		(OWN_CPU + _pid)

/* ---- shared state ------------------------------------------------------ */
byte slot;			/* pamt.slots[idx] */
byte pend;			/* ghost: counts in the word that are not
				 * references: gets' pending counts, and one
				 * too many, taken back at once */
short idle;			/* the IDLE_SLOTS gauge, summed */
bool queued;			/* the QUEUED bit of struct pamt_slot:
				 * on its idle LRU list, or taken off
				 * by a walk that has not looked yet */
byte installed;			/* the INSTALLED gauge, summed */

/* The fake TDX module's view of the range. */
bool mod_has_pair;
byte mod_pair = NO_PAIR;
byte td_pages;			/* 4K pages of the range a TD uses */
byte owner[NPAIRS];
#ifdef BUSY_MAX
byte busy_left = BUSY_MAX;
#endif

bool in_get[2];			/* getter i is inside tdx_pamt_get() */

/* Locals every process needs; the inlines below share them. */
#define PAMT_LOCALS						\
	byte old, ret, r, p = NO_PAIR, st, try, state, deadline, pos;	\
	bool ok;						\
	byte sw_old;						\
	bool sw_ok;						\
	byte rw

/* ---- helpers ------------------------------------------------------------ */

/* atomic_long_try_cmpxchg(): on failure @o is reloaded. */
inline try_cmpxchg(o, n, res)
{
	atomic {
		if
		:: slot == o -> slot = n; res = true
		:: else -> o = slot; res = false
		fi
	}
}

inline pamt_slot_state(w, s)
{
	if
	:: (w & PAMT_SLOT_HOLE) -> s = PAMT_SLOT_NOT_COVERED
	:: else ->
		if
		:: (w & PAMT_SLOT_TRANSIT) && (w & PAMT_SLOT_INSTALLED) ->
			s = PAMT_SLOT_REMOVING
		:: (w & PAMT_SLOT_TRANSIT) && !(w & PAMT_SLOT_INSTALLED) ->
			s = PAMT_SLOT_ADDING
		:: !(w & PAMT_SLOT_TRANSIT) && !(w & PAMT_SLOT_INSTALLED) ->
			s = PAMT_SLOT_EMPTY
		:: !(w & PAMT_SLOT_TRANSIT) && (w & PAMT_SLOT_INSTALLED) &&
		   pamt_slot_refs(w) != 0 -> s = PAMT_SLOT_ACTIVE
		:: !(w & PAMT_SLOT_TRANSIT) && (w & PAMT_SLOT_INSTALLED) &&
		   pamt_slot_refs(w) == 0 -> s = PAMT_SLOT_IDLE
		fi
	fi
}

/* ---- pairs: pamt_mag.c -------------------------------------------------- */

/* pamt_slot_pair_get(): magazines first, then the page allocator (which
 * may fail: GFP_NOWAIT). The reserve is one more source, not modelled. */
inline pamt_slot_pair_get(pp, rr)
{
	atomic {
		pp = 0;
		do
		:: pp < NPAIRS && owner[pp] != OWN_MAG -> pp++
		:: else -> break
		od;
		if
		:: pp < NPAIRS -> owner[pp] = OWN_ME; rr = 0
		:: else ->
			pp = 0;
			do
			:: pp < NPAIRS && owner[pp] != OWN_FREE -> pp++
			:: else -> break
			od;
			if
			:: pp < NPAIRS -> owner[pp] = OWN_ME; rr = 0
			:: true -> pp = NO_PAIR; rr = ENOMEM
			fi
		fi
	}
}

inline pamt_mag_push(pp)
{
	atomic {
		assert(pp < NPAIRS && owner[pp] == OWN_ME);	/* owned once */
		owner[pp] = OWN_MAG;
		pp = NO_PAIR
	}
}

inline pamt_pair_free(pp)
{
	atomic {
		assert(pp < NPAIRS && owner[pp] == OWN_ME);
		owner[pp] = OWN_FREE;
		pp = NO_PAIR
	}
}

/* pamt_mag_shrink_local(1): free one cached pair, if there is one. */
inline pamt_mag_shrink_one(pp, done)
{
	atomic {
		pp = 0;
		do
		:: pp < NPAIRS && owner[pp] != OWN_MAG -> pp++
		:: else -> break
		od;
		if
		:: pp < NPAIRS -> owner[pp] = OWN_FREE; done = true
		:: else -> done = false
		fi;
		pp = NO_PAIR
	}
}

/* ---- the fake TDX module ------------------------------------------------ */

#ifdef BUSY_MAX
#define MODULE_BUSY	:: busy_left > 0 -> busy_left--; st = TDX_PAMT_OPERAND_BUSY
#else
#define MODULE_BUSY	:: st = TDX_PAMT_OPERAND_BUSY
#endif

/* TDH.PHYMEM.PAMT.ADD */
inline module_add(pp, st)
{
	atomic {
		/* ADD is never issued on a range that has a pair. */
		assert(!mod_has_pair);
		assert(pp < NPAIRS && owner[pp] == OWN_ME);
		if
		:: mod_has_pair = true; mod_pair = pp; owner[pp] = OWN_MODULE;
		   st = TDX_PAMT_SUCCESS
		MODULE_BUSY
		:: st = TDX_PAMT_ERROR
		fi
	}
}

/* TDH.PHYMEM.PAMT.REMOVE: hands the pair back in @pp. */
inline module_remove(pp, st)
{
	atomic {
		/* REMOVE is never issued on a range in use, nor without a pair. */
		assert(td_pages == 0);
		assert(mod_has_pair);
		if
		:: pp = mod_pair; assert(owner[pp] == OWN_MODULE);
		   owner[pp] = OWN_ME; mod_pair = NO_PAIR; mod_has_pair = false;
		   st = TDX_PAMT_SUCCESS
		MODULE_BUSY
		:: st = TDX_PAMT_ERROR
		fi
	}
}

/* ---- pamt_slot.c -------------------------------------------------------- */

inline pamt_status_errno(st, rr)
{
	if
	:: st == TDX_PAMT_SUCCESS -> rr = 0
	:: st == TDX_PAMT_OPERAND_BUSY -> rr = EBUSY
	:: st == TDX_PAMT_ERROR -> rr = EIO
	fi
}

/*
 * pamt_slot_publish(): the owner adds @delta, the new word less the one it
 * owned; the counts that came meanwhile stay, and are references once the
 * word is INSTALLED and not TRANSIT.  MUTANT_PUBLISH_STORE: a store of the
 * new word, @delta applied to the owned word @own, losing them.
 */
inline pamt_slot_publish(own, delta)
{
#ifdef MUTANT_PUBLISH_STORE
	slot = own + delta;
#else
	slot = slot + delta;
#endif
	if
	:: (slot & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
	   PAMT_SLOT_INSTALLED -> pend = 0
	:: else
	fi
}

/*
 * Publish the IDLE word @rw again after a REMOVE that did not happen; gets
 * that came meanwhile hold references now, the slot ACTIVE, not IDLE.
 */
inline pamt_slot_publish_idle()
{
	atomic {
		idle++;
		pamt_slot_publish(rw | PAMT_SLOT_TRANSIT, -PAMT_SLOT_TRANSIT);
		if
		:: pamt_slot_refs(slot) != 0 -> idle--
		:: else
		fi
	}
}

/*
 * Called with the slot ADDING and owned, and the pair @p in hand (taken
 * before the transition: on PREEMPT_RT the magazines and the allocator
 * may not be used inside one).  One PAMT.ADD.  Ends ACTIVE(1) or EMPTY;
 * on failure the caller keeps @p, and gives it back after the transition
 * or, on BUSY, may try again with it.
 */
inline pamt_slot_add(rr)
{
	assert(p < NPAIRS && owner[p] == OWN_ME);
	module_add(p, st);
	pamt_status_errno(st, rr);
	if
	:: rr != 0 ->
		/* A failed ADD leaves the slot as it was: EMPTY. */
		atomic {
			assert(!mod_has_pair);
			assert((slot & ~PAMT_SLOT_REF_MASK) == PAMT_SLOT_TRANSIT);
#ifdef MUTANT_ADD_FAIL_LOSES_PAIR
			p = NO_PAIR;
#endif
			pamt_slot_publish(old | PAMT_SLOT_TRANSIT, -PAMT_SLOT_TRANSIT)
		}
	:: else ->
		atomic {	/* the INSTALLED gauge is statistics only */
			installed++;
			pamt_slot_publish(old | PAMT_SLOT_TRANSIT,
					  PAMT_SLOT_INSTALLED - PAMT_SLOT_TRANSIT)
		};
		p = NO_PAIR;	/* the module owns it now */
		/* pamt_shrink_installed(), after the transition: filed */
		queued = true
	fi;
	st = 0
}

/*
 * Called with the slot REMOVING and owned by this process.  On BUSY with
 * a try left, pamt_slot_remove() publishes the IDLE word @rw it took the
 * slot from, backs off with preemption on, and takes the slot again only
 * if it still holds @rw (MUTANT_REOWN_BLIND: whatever it holds); if not,
 * another process answers for the slot: stop, as if BUSY (EAGAIN here).
 * the idle gauge is read only at quiescence, so its updates share a step with
 * the word's; locals likewise.
 */
inline pamt_slot_remove(dest, rr)
{
	/* The word it owned: counts that came since are gets'. */
	rw = slot & ~(PAMT_SLOT_TRANSIT | PAMT_SLOT_REF_MASK);
	do
	:: module_remove(p, st);
	   pamt_status_errno(st, rr);
	   if
	   :: rr == EBUSY && try < PAMT_BUSY_RETRIES ->
		try++;
#ifdef MUTANT_BUSY_KEEPS_TRANSIT
		idle++;
#else
		pamt_slot_publish_idle();
#endif
		atomic {
			if
#ifdef MUTANT_REOWN_BLIND
			:: true -> slot = rw | PAMT_SLOT_TRANSIT; idle--
#else
			:: slot == rw -> slot = rw | PAMT_SLOT_TRANSIT; idle--
			:: slot != rw -> rr = EAGAIN
#endif
			fi
		};
		if
		:: rr == EAGAIN -> break
		:: else
		fi
	   :: else -> break
	   fi
	od;
	try = 0;
	if
	:: rr == EAGAIN -> rr = EBUSY	/* the slot is another's now */
	:: rr == EBUSY ->
		/* The word it had: the owner set only TRANSIT. */
#ifdef MUTANT_BUSY_KEEPS_TRANSIT
		idle++
#else
		pamt_slot_publish_idle()
#endif
	:: rr == EIO ->
		atomic {
			pamt_slot_publish(rw | PAMT_SLOT_TRANSIT,
					  (PAMT_SLOT_INSTALLED | PAMT_SLOT_LEAKED) -
					  (rw | PAMT_SLOT_TRANSIT))
		}
	:: rr == 0 ->
		atomic {
			installed--;
			pamt_slot_publish(rw | PAMT_SLOT_TRANSIT,
					  -(rw | PAMT_SLOT_TRANSIT))
		};
		if
		:: dest == PAMT_PAIR_TO_MAG -> pamt_mag_push(p)
		:: else -> pamt_pair_free(p)
		fi
	fi;
	atomic { st = 0; rw = 0 }
}

/*
 * pamt_slot_wait(): wait for the owner of a transition to publish its
 * result in @old; @res is false once the get's deadline has passed, and the
 * get then returns -EBUSY.  The deadline belongs to the whole get.
 *
 * The local `deadline` stands for the C one: 0 while the get has none, then
 * the number of waits the get has begun under it.  As in C, the first
 * wait sets it on entry, and it is checked at the top of each spin and of
 * each later wait.
 *
 * Time is abstracted by a budget of waits: "deadline passed" is a free
 * choice once a deadline is set, sticky since the get ends at once, and
 * forced once the get has begun PAMT_WAIT_BUDGET waits under it.  The free
 * choice alone would cover every timing, but spin's weak fairness is per
 * process, not per choice: "not yet" could be chosen forever, time would
 * never advance, and no liveness property could be proved.  The budget is
 * what makes time advance.  A budget of one loses no reachable state: the
 * getter only reads the word between the first wait and the last one (a
 * failed cmpxchg is a read), so a run with more waits is matched by one in
 * which the getter stays in its first wait until its last read.
 * PAMT_WAIT_BUDGET=2 gives the same verdicts (README).
 */
inline pamt_slot_wait(res)
{
	/* if (!*deadline) *deadline = ktime_get_ns() + PAMT_WAIT_NS; */
	if
	:: deadline == 0 -> deadline = 1; res = true
	:: deadline > 0 -> res = false
	:: deadline > 0 && deadline < PAMT_WAIT_BUDGET -> deadline++; res = true
	fi;
	if
	:: res ->
		if
		:: atomic { !(slot & PAMT_SLOT_TRANSIT) -> old = slot }
		:: atomic { (slot & PAMT_SLOT_TRANSIT) ->
			if
			:: deadline == 0 -> deadline = 1
			:: else
			fi };
			/* cpu_relax() until the word settles or time is up */
			if
			:: atomic { !(slot & PAMT_SLOT_TRANSIT) -> old = slot }
			:: res = false
			fi
		fi
	:: else
	fi
}

/*
 * pamt_slot_uncount(): take the get's count back (one compare-and-exchange
 * that succeeds, the failed ones being reads) unless the word is INSTALLED
 * and not TRANSIT: then the count is a reference.  @res: taken back.
 * MUTANT_NO_UNCOUNT: leave it in the word.
 */
inline pamt_slot_uncount(res)
{
	atomic {
		if
		:: (slot & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
		   PAMT_SLOT_INSTALLED -> res = false
		:: else ->
#ifndef MUTANT_NO_UNCOUNT
			assert(pend > 0 && pamt_slot_refs(slot) > 0);
			slot--; pend--;
#endif
			res = true
		fi;
		old = slot
	}
}

/* pamt_slot_unget(): a count one reference too many; the others stay. */
inline pamt_slot_unget()
{
	atomic {
		assert(pend > 0 && pamt_slot_refs(slot) > 1);
		slot--; pend--
	}
}

/* The get's count went onto @old, INSTALLED and not TRANSIT. */
inline pamt_slot_got(rr)
{
	if
#ifndef MUTANT_OVERFLOW_NO_CHECK
	:: pamt_slot_refs(old) >= PAMT_SLOT_REF_MAX -> pamt_slot_unget(); rr = EOVERFLOW
#endif
	:: else ->
#ifdef MUTANT_OVERFLOW_NO_CHECK
		atomic {
			if
			:: pamt_slot_refs(old) >= PAMT_SLOT_REF_MAX -> pend--
			:: else
			fi
		};
#endif
		if
		:: pamt_slot_refs(old) == 0 && !(old & PAMT_SLOT_LEAKED) ->
			idle--		/* revive */
		:: else
		fi;
		rr = 0
	fi
}

/* atomic_fetch_add(1, slot): @old, the word before; the ghost follows. */
inline pamt_slot_count()
{
	atomic {
		old = slot;
		/* The C field has room: the count never carries into a flag. */
		assert(pamt_slot_refs(slot) < PAMT_SLOT_REF_MASK);
		slot++;
		if
		:: (old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) !=
		   PAMT_SLOT_INSTALLED ||
		   pamt_slot_refs(old) >= PAMT_SLOT_REF_MAX -> pend++
		:: else
		fi
	}
}

/*
 * The rest of a get whose count went onto @old.  From here @old is the
 * word as last read, this get's count in it.  The turn of a get on an
 * EMPTY word to try the ADD comes by time: "the word moved" or "the turn
 * came" are both left open.
 */
inline pamt_slot_get_slow(rr)
{
	pos = pamt_slot_refs(old);
	if
	:: (old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
	   PAMT_SLOT_INSTALLED -> pamt_slot_got(rr)
	:: else ->
	old = old + 1;
	do
	:: (old & PAMT_SLOT_HOLE) -> pamt_slot_uncount(ok); rr = EINVAL; break
	:: (old & PAMT_SLOT_TRANSIT) ->
		pamt_slot_wait(ok);
		if
		:: !ok ->
			pamt_slot_uncount(ok);
			if
			:: ok -> rr = EBUSY
			:: else -> rr = 0
			fi;
			break
		:: else	/* continue */
		fi
	:: !(old & (PAMT_SLOT_HOLE | PAMT_SLOT_TRANSIT)) &&
	   (old & PAMT_SLOT_INSTALLED) ->
		/* Published with this count in it: a reference. */
		assert(pamt_slot_refs(old) <= PAMT_SLOT_REF_MAX);
		rr = 0; break
	:: !(old & (PAMT_SLOT_HOLE | PAMT_SLOT_TRANSIT | PAMT_SLOT_INSTALLED)) &&
	   pos != 0 ->
		/* Not its turn yet: wait for the word to move, or the turn. */
		if
		:: atomic { slot != old && !(slot & PAMT_SLOT_TRANSIT) -> old = slot }
		:: atomic { pos = 0; old = slot }
		fi
	:: !(old & (PAMT_SLOT_HOLE | PAMT_SLOT_TRANSIT | PAMT_SLOT_INSTALLED)) &&
	   pos == 0 ->
		/* EMPTY: a pair first, outside any transition. */
		if
		:: p == NO_PAIR ->
			pamt_slot_pair_get(p, rr);
			if
			:: rr != 0 ->
				/* -ENOMEM only if the slot is still EMPTY. */
				atomic {
					old = slot;
					if
					:: old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT) -> rr = 0
					:: else
					fi
				};
				if
				:: rr != 0 ->
					pamt_slot_uncount(ok);
					if
					:: !ok -> rr = 0
					:: else
					fi;
					break
				:: else
				fi
			:: else
			fi
		:: else
		fi;
		if
		:: p != NO_PAIR ->
			/* Become the one CPU that issues the ADD. */
#ifdef MUTANT_NO_TRANSIT
			ok = true;
#else
			try_cmpxchg(old, old | PAMT_SLOT_TRANSIT, ok);
#endif
			if
			:: ok ->
				pamt_slot_add(rr);
				if
				:: rr == EBUSY && try < PAMT_BUSY_RETRIES ->
					/* EMPTY again: back off without a count */
					try++;
					pamt_slot_uncount(ok);
					if
					:: !ok -> rr = 0; break
					:: else
					fi;
					pamt_slot_count();
					if
					:: (old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
					   PAMT_SLOT_INSTALLED ->
						pamt_slot_got(rr); break
					:: else
					fi;
					atomic { pos = pamt_slot_refs(old); old = old + 1; rr = 0 }
				:: rr == 0 -> break
				:: else ->
					/* Another get's ADD may have installed it since. */
					pamt_slot_uncount(ok);
					if
					:: !ok -> rr = 0
					:: else
					fi;
					break
				fi
			:: else	/* continue */
			fi
		:: else	/* the slot changed: continue */
		fi
	od
	fi;
	/* A pair the get did not use goes back (to a magazine). */
	if
	:: p != NO_PAIR -> pamt_mag_push(p)
	:: else
	fi;
	old = 0; ok = false; deadline = 0; try = 0; pos = 0
}

inline tdx_pamt_get(rr)
{
	pamt_slot_count();
	if
	/*
	 * Fast only for INSTALLED with a count in [1, REF_MAX - 1] and no
	 * other flag: (u32)(old - (INSTALLED | 1)) < REF_MAX - 1 in C.
	 */
	:: old < (PAMT_SLOT_INSTALLED | 1) ||
	   old - (PAMT_SLOT_INSTALLED | 1) >= PAMT_SLOT_REF_MAX - 1 ->
		pamt_slot_get_slow(rr)
	:: else -> rr = 0
	fi;
	old = 0; ok = false
}

/* ---- pamt_shrink.c ------------------------------------------------------ */

/* pamt_lru_add(): test_and_set_bit(), then the entry at the tail. */
inline pamt_lru_add()
{
	queued = true
}

/* The slot is IDLE and not LEAKED: reclaim could take it. */
#define reclaimable(w)	(((w) & PAMT_SLOT_INSTALLED) && !((w) & PAMT_SLOT_TRANSIT) && \
			 pamt_slot_refs(w) == 0 && !((w) & PAMT_SLOT_LEAKED))

/*
 * A walk that takes one entry off (pamt_lru_isolate()), then
 * pamt_lru_dispose(), which clears the bit, then pamt_reclaim_slot().
 * rr: 0 freed, EAGAIN nothing attempted, else the REMOVE's error.
 */
inline pamt_reclaim(rr)
{
	rr = EAGAIN;
	atomic { sw_ok = queued; queued = false };
	if
	:: sw_ok ->
		sw_old = slot;
		do
		:: true ->
			pamt_slot_state(sw_old, state);
			if
			:: state == PAMT_SLOT_REMOVING ->
				/* another's REMOVE may stay BUSY: keep it queued */
				pamt_lru_add();
				break
			:: state != PAMT_SLOT_REMOVING && !reclaimable(sw_old) ->
				break	/* in use, empty, LEAKED: dropped */
			:: reclaimable(sw_old) ->
				/* a BUSY REMOVE restores the word */
#ifdef MUTANT_RECLAIM_NO_RECHECK
				slot = PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT; sw_ok = true;
#else
				try_cmpxchg(sw_old, sw_old | PAMT_SLOT_TRANSIT, sw_ok);
#endif
				if
				:: sw_ok ->
					idle--;
					pamt_slot_remove(PAMT_PAIR_TO_FREE, rr);
					if
					:: rr != 0 -> pamt_lru_add()
					:: else
					fi;
					break
				:: else	/* sw_old reloaded: look again */
				fi
			fi
		od
	:: else
	fi;
	sw_old = 0; sw_ok = false; state = 0
}

/* Called from put: account and queue the new IDLE slot; over the cap,
 * free a cached pair, or reclaim the oldest entry, never this slot unless
 * it is that entry (the rest is the worker's). Whether the cap is
 * exceeded is left open. */
inline pamt_shrink_idle_inc()
{
	idle++;
	queued = true;	/* queued still if a get revived it since */
	if
	:: skip			/* under the cap */
	:: pamt_mag_shrink_one(p, sw_ok);
#ifdef CAP_SWEEP
	   if
	   :: !sw_ok ->
		pamt_reclaim(r);
		r = 0
	   :: else
	   fi;
#endif
	   sw_ok = false
	fi
}

/* ---- put ---------------------------------------------------------------- */

inline pamt_slot_put_slow(rr)
{
	old = slot;
	do
	:: (old & PAMT_SLOT_HOLE) -> rr = EINVAL; break
	:: !(old & PAMT_SLOT_HOLE) &&
	   ((old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) != PAMT_SLOT_INSTALLED ||
	    pamt_slot_refs(old) == 0) ->
		/* WARN_ONCE: put with no reference; our users never do it. */
		assert(false); rr = EINVAL; break
	:: (old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT | PAMT_SLOT_HOLE)) ==
	   PAMT_SLOT_INSTALLED && pamt_slot_refs(old) > 1 ->
		try_cmpxchg(old, old - 1, ok);
		if
		:: ok -> rr = 0; break
		:: else
		fi
	:: (old & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT | PAMT_SLOT_HOLE)) ==
	   PAMT_SLOT_INSTALLED && pamt_slot_refs(old) == 1 ->
		try_cmpxchg(old, old - 1, ok);
		if
		:: ok ->
			if
			:: !(old & PAMT_SLOT_LEAKED) -> pamt_shrink_idle_inc()
			:: else
			fi;
			rr = 0; break
		:: else
		fi
	od;
	old = 0; ok = false
}

inline tdx_pamt_put(rr)
{
	old = slot;
	do
	/* Fast only for INSTALLED with a count in [2, REF_MAX], no other flag. */
	:: old < (PAMT_SLOT_INSTALLED | 2) ||
	   old - (PAMT_SLOT_INSTALLED | 2) >= PAMT_SLOT_REF_MAX - 1 ->
		pamt_slot_put_slow(rr); break
	:: else ->
		try_cmpxchg(old, old - 1, ok);
		if
		:: ok -> rr = 0; break
		:: else
		fi
	od;
	old = 0; ok = false
}

/* ---- processes ---------------------------------------------------------- */

/* A user of the range: get, put a TD page in it, take it out, put. */
proctype getter(byte i)
{
	PAMT_LOCALS;
	byte n;

	for (n : 1 .. NITER) {
		in_get[i] = true;
		tdx_pamt_get(ret);
get_done:
		in_get[i] = false;
		if
		:: ret == 0 ->
			atomic {
				/* The 4K SEAMCALLs need the pair. */
				assert(mod_has_pair && pamt_slot_refs(slot) > pend &&
				       (slot & (PAMT_SLOT_INSTALLED | PAMT_SLOT_TRANSIT)) ==
				       PAMT_SLOT_INSTALLED);
				td_pages++
			};
#ifdef HELD
			/* The page's next use, before the put of this one. */
			in_get[i] = true;
			tdx_pamt_get(ret);
			in_get[i] = false;
			if
			:: ret == 0 -> tdx_pamt_put(ret); assert(ret == 0)
			:: else -> ret = 0
			fi;
#endif
			td_pages--;
			tdx_pamt_put(ret);
			assert(ret == 0)
		:: else -> ret = 0
		fi
	}
}

#ifdef HELD
/*
 * The TD's other pages of the range, mapped before the run: each is
 * taken out (PAGE.REMOVE), then put.
 */
proctype holder()
{
	PAMT_LOCALS;
	byte n;

	for (n : 1 .. SLOT_PAGES) {
		atomic { assert(td_pages > 0); td_pages-- };
		tdx_pamt_put(ret);
		assert(ret == 0)
	}
}
#endif

/* kswapd calling tdx_pamt_shrink_scan() any number of times. */
proctype shrinker()
{
	PAMT_LOCALS;

	do
	:: pamt_reclaim(r); r = 0
	:: break
	od
}

init {
	byte i;

	atomic {
		/* One pair cached, the others with the page allocator. */
		owner[0] = OWN_MAG;
#ifdef HELD
		/* ACTIVE: a TD uses SLOT_PAGES pages of the range. */
		slot = PAMT_SLOT_INSTALLED | SLOT_PAGES; installed = 1;
		queued = true; td_pages = SLOT_PAGES;
		mod_has_pair = true; mod_pair = 1; owner[1] = OWN_MODULE;
		run holder();
#else
		/* The slot starts EMPTY, or IDLE. */
		if
		:: skip
		:: slot = PAMT_SLOT_INSTALLED; idle = 1; installed = 1;
		   queued = true;
		   mod_has_pair = true; mod_pair = 1; owner[1] = OWN_MODULE
		fi;
#endif
		for (i : 0 .. NGET - 1) {
			run getter(i)
		}
		run shrinker()
	}

	/* Quiescence: everybody else has finished. */
	_nr_pr == 1;
	atomic {
		assert(td_pages == 0);
		assert(pamt_slot_refs(slot) == 0 && !(slot & PAMT_SLOT_TRANSIT));
		assert(pend == 0);
		assert(((slot & PAMT_SLOT_INSTALLED) != 0) == mod_has_pair);
		assert(installed == mod_has_pair);
		/* The idle gauge counts IDLE slots that are not LEAKED. */
		assert(idle == ((slot & PAMT_SLOT_INSTALLED) &&
				!(slot & PAMT_SLOT_LEAKED)));
		/* An IDLE slot that reclaim could take is on the idle LRU. */
		assert(!reclaimable(slot) || queued);
		/* No pair lost: each is free, cached or in the module. */
		for (i : 0 .. NPAIRS - 1) {
			assert(owner[i] == OWN_FREE || owner[i] == OWN_MAG ||
			       (owner[i] == OWN_MODULE && mod_pair == i))
		}
	}
}

/* ---- properties --------------------------------------------------------- */

#define in_module(k)	(owner[k] == OWN_MODULE)

/* Invariants of every reachable state. */
ltl inv {
	[] (
	/* the references stay within their bound */
	pend <= pamt_slot_refs(slot) &&
	pamt_slot_refs(slot) - pend <= PAMT_SLOT_REF_MAX &&
	/* a reference: pair installed, no transition */
	(pamt_slot_refs(slot) == pend ||
	 (mod_has_pair && (slot & PAMT_SLOT_INSTALLED) &&
	  !(slot & PAMT_SLOT_TRANSIT))) &&
	/* outside a transition the word says what the module holds */
	((slot & PAMT_SLOT_TRANSIT) ||
	 (((slot & PAMT_SLOT_INSTALLED) != 0) == mod_has_pair)) &&
	/* TD pages only under a reference */
	td_pages <= pamt_slot_refs(slot) - pend &&
	/* the module holds at most one pair, the one it says */
	(in_module(0) + in_module(1) + in_module(2)) == mod_has_pair &&
	(!mod_has_pair || owner[mod_pair] == OWN_MODULE))
}

/* Every get returns (0 or an error), under weak fairness. */
ltl get_done {
	[] ((in_get[0] -> <> !in_get[0]) && (in_get[1] -> <> !in_get[1]))
}

/* Every transition ends. */
ltl transit_ends {
	[] ((slot & PAMT_SLOT_TRANSIT) -> <> !(slot & PAMT_SLOT_TRANSIT))
}
