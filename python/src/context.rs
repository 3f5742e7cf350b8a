//! The native context (`oxmq.Context` subclasses it).

use crate::errors::*;
use crate::release::drain_releases;
use crate::shadow::Registry;
use oxmq::errno;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

/// The native context. `oxmq.Context` subclasses it.
#[pyclass(frozen, subclass, module = "oxmq._oxmq", name = "Context")]
pub(crate) struct Context {
    pub(crate) ctx: Arc<CtxShared>,
}

/// What shadows of one context share (`Context.shadow`).
pub(crate) struct CtxShared(oxmq::Context);

impl CtxShared {
    pub(crate) fn core(&self) -> &oxmq::Context {
        &self.0
    }
}

impl std::ops::Deref for CtxShared {
    type Target = oxmq::Context;

    fn deref(&self) -> &oxmq::Context {
        &self.0
    }
}

impl Drop for CtxShared {
    fn drop(&mut self) {
        CONTEXTS.remove(self as *const CtxShared as usize);
    }
}

static CONTEXTS: Registry<CtxShared> = Registry::new();

#[pymethods]
impl Context {
    #[new]
    #[pyo3(signature = (*_args, shadow=0, **_kwargs))]
    fn new(
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        shadow: usize,
        _kwargs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        if shadow != 0 {
            // pyzmq would dereference any address; here only a live context's is accepted.
            let ctx = CONTEXTS.get(shadow).ok_or_else(|| zmq_error(py, errno::EFAULT))?;
            return Ok(Context { ctx });
        }
        let ctx = Arc::new(CtxShared(oxmq::Context::new()));
        CONTEXTS.add(&ctx);
        Ok(Context { ctx })
    }

    /// The address of the shared native context (`Context.shadow(address)`).
    #[getter]
    fn underlying(&self) -> usize {
        Arc::as_ptr(&self.ctx) as usize
    }

    /// Terminate the context (`zmq_ctx_term`): blocking calls fail with
    /// ETERM; waits (without the GIL) until every socket is closed.
    fn _term(&self, py: Python<'_>) {
        drain_releases(py);
        let ctx = self.ctx.core().clone();
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
