package engine

import (
	"golang.org/x/net/html/atom"
)

// inherit copies the current element's flags, heading level and scopes
// into e.
func (b *htmlBuilder) inherit(e *htmlOpen) {
	if t := b.top(); t != nil {
		e.flags, e.level, e.scope, e.boil = t.flags, t.level, t.scope, t.boil
		return
	}
	for i := range e.scope {
		e.scope[i] = -1
	}
}

// closeImplied pops the elements a start tag of a closes implicitly.
func (b *htmlBuilder) closeImplied(a atom.Atom, kind htmlKind) {
	t := b.top()
	if t == nil {
		return
	}
	switch a {
	case atom.Li:
		if i := t.scope[htmlScopeLi]; i >= 0 {
			b.popTo(int(i))
		}
	case atom.Dt, atom.Dd:
		if i := t.scope[htmlScopeDd]; i >= 0 {
			b.popTo(int(i))
		}
	case atom.Td, atom.Th:
		if i := t.scope[htmlScopeCell]; i >= 0 {
			b.popTo(int(i))
		}
	case atom.Tr, atom.Thead, atom.Tbody, atom.Tfoot, atom.Caption:
		// A row, row group or caption ends the open cell and row; a row
		// group also ends the open row group.
		for _, k := range []int{htmlScopeCell, htmlScopeRow} {
			if t := b.top(); t != nil && t.scope[k] >= 0 {
				b.popTo(int(t.scope[k]))
			}
		}
		if a != atom.Tr {
			if t := b.top(); t != nil && t.scope[htmlScopeTSect] >= 0 {
				b.popTo(int(t.scope[htmlScopeTSect]))
			}
		}
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		switch t.a {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			b.popTo(len(b.stack) - 1)
		}
	}
	if kind&htmlClosesP != 0 {
		if t := b.top(); t != nil && t.scope[htmlScopeP] >= 0 {
			b.popTo(int(t.scope[htmlScopeP]))
		}
	}
}

// push opens e, or records it as overflow beyond htmlMaxDepth. It reports
// whether e is on the stack.
func (b *htmlBuilder) push(e htmlOpen, drop bool) bool {
	if len(b.stack) >= htmlMaxDepth {
		if b.overflow == nil {
			b.overflow = make(map[string]int32)
		}
		b.overflow[e.name]++
		if drop && !b.ovDrop {
			b.ovDrop, b.ovDropName, b.ovDropLevel = true, e.name, b.overflow[e.name]
		}
		return false
	}
	if drop {
		e.flags |= htmlDropped
	}
	b.stack = append(b.stack, e)
	b.counts[e.name]++
	return true
}

func (b *htmlBuilder) endTag(rawName []byte) {
	b.wantTitle = false
	a := atom.Lookup(rawName)
	if a == atom.Br { // </br> is read as <br>
		if !b.dropping() {
			b.lineBreak()
		}
		return
	}
	if a == atom.Body || a == atom.Html {
		return // content after </body> still belongs to the body
	}
	var name string
	if a != 0 {
		name = a.String()
	} else {
		name = string(rawName)
	}
	if b.overflow[name] > 0 {
		if b.ovDrop && b.ovDropName == name && b.overflow[name] == b.ovDropLevel {
			b.ovDrop = false
		}
		b.overflow[name]--
		if htmlKinds[a]&htmlBlock != 0 && !b.dropping() {
			b.flush()
		}
		return
	}
	if b.counts[name] == 0 {
		if htmlKinds[a]&htmlBlock != 0 && !b.dropping() {
			b.flush()
		}
		return
	}
	for i := len(b.stack) - 1; i >= 0; i-- {
		if b.stack[i].name == name {
			b.popTo(i)
			return
		}
	}
}

// lineBreak handles <br>: a space, or a paragraph break when it follows
// another <br> with no text between.
func (b *htmlBuilder) lineBreak() {
	b.brRun++
	if b.brRun >= 2 {
		b.flush()
		b.brRun = 2
	} else {
		b.space = true
	}
}

// popTo closes the open elements from the top down to index i inclusive.
func (b *htmlBuilder) popTo(i int) {
	for len(b.stack) > i {
		b.pop()
	}
}

func (b *htmlBuilder) pop() {
	e := b.top()
	if e.flags&htmlDropped == 0 && htmlKinds[e.a]&htmlBlock != 0 {
		b.flush()
	}
	if e.table {
		t := b.tables[len(b.tables)-1]
		switch e.a {
		case atom.Table:
			b.tables = b.tables[:len(b.tables)-1]
			b.emitTable(t)
		case atom.Caption:
			t.inCaption = false
		case atom.Tr:
			t.rowOpen, t.cellOpen = false, false
		case atom.Td, atom.Th:
			t.cellOpen = false
		}
	}
	if e.a == atom.Li {
		b.prefix = ""
	}
	if b.boxHead == int32(len(b.stack)) {
		b.boxHead = 0
	}
	if len(b.overflow) > 0 { // elements opened beyond the depth cap end with their ancestor
		clear(b.overflow)
		b.ovDrop = false
	}
	b.counts[e.name]--
	b.stack = b.stack[:len(b.stack)-1]
}

// boxHeadAnchor makes the open heading of an admonition box a section
// heading: a link target inside it (an <a id> or <a name>, as the Apache
// manual's <div class="note"><h3><a id="what_is_matched" ...>) is the
// anchor of a section others link to, not of a box's label. e is the
// element about to open inside the heading.
func (b *htmlBuilder) boxHeadAnchor(e *htmlOpen) {
	for i := int(b.boxHead) - 1; i < len(b.stack); i++ {
		b.stack[i].level = b.boxLevel
	}
	e.level = b.boxLevel
}
