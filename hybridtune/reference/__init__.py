"""The independent numpy reference: IVP evaluation from the trees and a plain PIRK integrator."""
