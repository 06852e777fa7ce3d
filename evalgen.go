package engine

// EvalCase is one test case of a dataset for Genkit's eval:flow command
// (genkit eval:flow FLOW --input FILE): an ID, the input to run the flow
// with, and optionally a reference answer. In is the input type of the flow
// the dataset is meant for; a dataset is a JSON array of EvalCase values.
type EvalCase[In any] struct {
	// TestCaseId names the case in evaluation results.
	TestCaseId string `json:"testCaseId"`
	// Input is what the flow is run with.
	Input In `json:"input"`
	// Reference is the expected answer, or for injection cases the
	// expected behaviour; empty when there is none.
	Reference string `json:"reference,omitempty"`
}
