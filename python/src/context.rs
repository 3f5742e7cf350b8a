//! The native context (`oxmq.Context` subclasses it).

use crate::errors::*;
use crate::release::drain_releases;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// The native context. `oxmq.Context` subclasses it.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Context")]
pub(crate) struct Context {
    pub(crate) ctx: oxmq::Context,
}

#[pymethods]
impl Context {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyAny>>) -> Self {
        Context { ctx: oxmq::Context::new() }
    }

    /// Terminate the context (`zmq_ctx_term`): blocking calls fail with
    /// ETERM; waits (without the GIL) until every socket is closed.
    fn _term(&self, py: Python<'_>) {
        drain_releases(py);
        let ctx = self.ctx.clone();
        py.detach(move || ctx.term());
        drain_releases(py);
    }

    /// `zmq_ctx_shutdown`: blocking calls fail with ETERM; does not wait.
    fn _shutdown(&self) {
        self.ctx.shutdown();
    }

    /// Whether `term()` or `shutdown()` was called.
    #[getter]
    fn _terminated(&self) -> bool {
        self.ctx.is_terminated()
    }

    /// `zmq_ctx_set`.
    fn _ctx_set(&self, py: Python<'_>, option: i32, value: i32) -> PyResult<()> {
        self.ctx.set(option, value).map_err(|e| zmq_error(py, core_errno(e)))
    }

    /// `zmq_ctx_get`.
    fn _ctx_get(&self, py: Python<'_>, option: i32) -> PyResult<i32> {
        self.ctx.get(option).map_err(|e| zmq_error(py, core_errno(e)))
    }
}
