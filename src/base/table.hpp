// SPDX-License-Identifier: BSD-3-Clause
// FixedTable: a slot array whose storage is handed in once and never grows.
// Every slot carries a generation so an id kept after release is recognised as
// stale instead of silently naming the slot's next occupant.
#pragma once

#include <stdint.h>

#include "port.h"

namespace edgelock
{

constexpr uint32_t kNoIndex = 0xffffffffu;

// id = generation << 32 | index; generation is never 0, so no id is 0.
inline uint64_t make_id(uint32_t index, uint32_t gen)
{
    return (uint64_t)gen << 32 | index;
}
inline uint32_t id_index(uint64_t id)
{
    return (uint32_t)(id & 0xffffffffu);
}
inline uint32_t id_gen(uint64_t id)
{
    return (uint32_t)(id >> 32);
}

template <typename T> class FixedTable
{
public:
    struct Slot {
        T value;
        uint32_t gen;
        uint32_t next_free; // free-list link while unused
        bool used;
    };

    static uint64_t bytes_for(uint32_t capacity) { return (uint64_t)capacity * sizeof(Slot); }

    // storage: capacity zeroed slots, owned by the caller. first_gen: every
    // slot's first generation (0 is taken as 1). A table whose ids reach the
    // application starts at a random one, so that an id of another table of
    // the same type (another client's) names no slot here.
    void init(Slot *storage, uint32_t capacity, uint32_t first_gen = 1)
    {
        slots_ = storage;
        cap_ = capacity;
        used_ = 0;
        high_ = 0;
        full_count_ = 0;
        free_head_ = capacity ? 0 : kNoIndex;
        for (uint32_t i = 0; i < capacity; i++) {
            slots_[i].gen = first_gen ? first_gen : 1;
            slots_[i].used = false;
            slots_[i].next_free = i + 1 < capacity ? i + 1 : kNoIndex;
        }
    }

    // A fresh value-initialised slot, or nullptr when full (nothing changed).
    T *alloc(uint32_t *index_out)
    {
        if (free_head_ == kNoIndex) {
            full_count_++;
            return nullptr;
        }
        uint32_t i = free_head_;
        Slot &s = slots_[i];
        free_head_ = s.next_free;
        s.used = true;
        s.value = T();
        used_++;
        if (used_ > high_)
            high_ = used_;
        EDGELOCK_ASSERT(i < high_); // end()
        *index_out = i;
        return &s.value;
    }

    void release(uint32_t i)
    {
        EDGELOCK_ASSERT(i < cap_ && slots_[i].used);
        Slot &s = slots_[i];
        s.used = false;
        s.gen = s.gen + 1 == 0 ? 1 : s.gen + 1;
        s.next_free = free_head_;
        free_head_ = i;
        used_--;
    }

    T *get(uint32_t i) { return i < cap_ && slots_[i].used ? &slots_[i].value : nullptr; }
    T *get_id(uint64_t id)
    {
        uint32_t i = id_index(id);
        return i < cap_ && slots_[i].used && slots_[i].gen == id_gen(id) ? &slots_[i].value : nullptr;
    }
    uint64_t id_of(uint32_t i) const { return make_id(i, slots_[i].gen); }
    uint32_t index_of(const T *v) const { return (uint32_t)(reinterpret_cast<const Slot *>(v) - slots_); }

    Slot *storage() { return slots_; }
    uint32_t capacity() const { return cap_; }
    uint32_t used() const { return used_; }
    uint32_t available() const { return cap_ - used_; }
    bool full() const { return used_ == cap_; }
    uint32_t high_water() const { return high_; } // most slots ever in use at once
    // One past every slot in use: a scan for the slots in use stops here, not
    // at capacity(). It is high_water(): released slots are reused last in,
    // first out, so a slot never used before is handed out only when every
    // slot below it is in use. A table sized for thousands but using a few
    // scans a few (the command timer scans the commands, the watchdog the
    // holds). Read it in the loop's condition: a slot handed out during the
    // scan may raise it.
    uint32_t end() const { return high_; }
    uint64_t full_count() const { return full_count_; } // allocations refused: table full

private:
    Slot *slots_ = nullptr;
    uint32_t cap_ = 0;
    uint32_t used_ = 0;
    uint32_t free_head_ = kNoIndex;
    uint32_t high_ = 0;
    uint64_t full_count_ = 0;
};

} // namespace edgelock
