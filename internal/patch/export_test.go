package patch

// Remembered is how many objects r holds a refusal series of.
func (r *Refusals) Remembered() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.objects)
}
